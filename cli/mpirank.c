/*
 * mpirank.c: the ranks of an MPI check and their messages (cli layer; mpirank.h has rules
 * M1-M4 and the message table, docs/cluster.md the user's view). Built against MPI only with
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
void pn_mpi_stop(struct pn_mpi_tally *t, bool wait) { *t = (struct pn_mpi_tally){0}; }
void pn_mpi_chan_open(void) {}
bool pn_mpi_chan_child(struct pn_unit_lookup *lk, uint32_t item) { return false; }
void pn_mpi_chan_parent(void) {}
void pn_mpi_chan_close(void) {}
#else
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

enum {
	TAG_UNIT = 1,
	TAG_CANCEL,
	TAG_STOP,
	TAG_HELLO,
	TAG_BEAT,
	TAG_RESULT,
	TAG_FAILED,
	TAG_KEYS, /* M4 from here on */
	TAG_ASK,
	TAG_ANSWER,
	TAG_LOST,
	TAG_TALLY
};
enum { FRAME_KEYS = 1, FRAME_ASK, FRAME_COUNTS };

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

/* ---- lookups (M4) ---- */
/* A send in flight: its buffer is kept until MPI is done with it. */
struct sent {
	MPI_Request req;
	uint8_t *buf;
};

/* An owner's question with keys it does not know yet. */
struct pending {
	int from;
	uint32_t id, item, schedule, n;
	uint64_t *keys, *ends;
	double until_s;
};

static struct {
	bool on; /* 2 ranks or more */
	double wait_s;
	bool wrong_end, verify; /* test hooks */
	bool *lost;             /* ranks rank 0 said were lost */
	struct pn_unit_table *table;
	struct pending *pend;
	uint32_t npend, cap_pend;
	struct sent *sent;
	uint32_t nsent, cap_sent;
	/* the channel to this rank's unit child: frames in req (a pipe: [0] read, [1] write
	 * end), answers out rep (a socket pair: [1] the rank's, [0] the child's) */
	int req[2], rep[2];
	uint8_t *buf;
	size_t len, cap;
	uint32_t item; /* the child's item (its frames name it too) */
	/* the child's question in flight */
	bool asking;
	uint32_t id, n, left; /* question id, keys, owners yet to answer */
	uint64_t *ends;
	int *owner; /* per key */
	bool *part; /* per rank: asked and not answered yet */
	double until_s;
	struct pn_mpi_tally t;
} dd = {.req = {-1, -1}, .rep = {-1, -1}};

static int owner_of(uint32_t item, uint32_t schedule, uint64_t key)
{
	PN_ASSERT(lead.size >= 2);
	return 1 + (int)(pn_unit_key_hash(item, schedule, key) % (uint64_t)(lead.size - 1));
}

/* v (n of `each` bytes, room for *cap) with room for one more. */
static void *grow(void *v, uint32_t n, uint32_t *cap, size_t each)
{
	if (n < *cap)
		return v;
	*cap = *cap ? 2 * *cap : 16;
	v = realloc(v, *cap * each);
	PN_ASSERT(v != NULL);
	return v;
}

/* A lookup message, sent without waiting (its buffer, malloc'd, is the send's from now). */
static void lk_send(int rank, int tag, uint8_t *buf, size_t len)
{
	if (dd.lost[rank]) {
		free(buf);
		return;
	}
	dd.sent = grow(dd.sent, dd.nsent, &dd.cap_sent, sizeof(*dd.sent));
	struct sent *x = &dd.sent[dd.nsent++];
	PN_ASSERT(len <= INT32_MAX);
	x->buf = buf;
	MPI_Isend(buf, (int)len, MPI_BYTE, rank, tag, MPI_COMM_WORLD, &x->req);
	if (rank != lead.rank) {
		dd.t.lk_messages++;
		dd.t.lk_bytes += len;
	}
}

/* The sends MPI is done with, freed; true when none is left. */
static bool sends_done(void)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < dd.nsent; i++) {
		int done = 0;
		MPI_Test(&dd.sent[i].req, &done, MPI_STATUS_IGNORE);
		if (done)
			free(dd.sent[i].buf);
		else
			dd.sent[k++] = dd.sent[i];
	}
	dd.nsent = k;
	return k == 0;
}

/* An owner answers question q (its unknown keys stay UINT64_MAX). */
static void answer(int to, uint32_t id, const uint64_t *ends, uint32_t n)
{
	uint8_t *m = malloc(4 + 8 * (size_t)n);
	PN_ASSERT(m != NULL);
	pn_put32(m, id);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t e = ends[i];
		if (dd.wrong_end && e != PN_UNIT_UNKNOWN && e > 0)
			e--; /* test hook: an owner that lies (short: the unit runs again) */
		pn_put64(m + 4 + 8 * (size_t)i, e);
	}
	lk_send(to, TAG_ANSWER, m, 4 + 8 * (size_t)n);
}

/* Pending questions answered when every key is known, or the wait is over, or asked by a
 * lost rank (dropped). */
static void pending_check(void)
{
	double now = clock_s();
	uint32_t k = 0;
	for (uint32_t i = 0; i < dd.npend; i++) {
		struct pending *q = &dd.pend[i];
		bool all = true;
		for (uint32_t j = 0; j < q->n; j++) {
			if (q->ends[j] == PN_UNIT_UNKNOWN)
				q->ends[j] = pn_unit_table_get(dd.table, q->item, q->schedule,
							       q->keys[j]);
			all &= q->ends[j] != PN_UNIT_UNKNOWN;
		}
		if (all || now >= q->until_s || dd.lost[q->from]) {
			if (!dd.lost[q->from])
				answer(q->from, q->id, q->ends, q->n);
			free(q->keys);
			free(q->ends);
		} else {
			dd.pend[k++] = *q;
		}
	}
	dd.npend = k;
}

static void got_keys(const uint8_t *m, size_t n)
{
	if (n < 8 || (n - 8) % 16)
		return;
	uint32_t item = pn_get32(m), schedule = pn_get32(m + 4);
	for (size_t at = 8; at < n; at += 16)
		pn_unit_table_put(dd.table, item, schedule, pn_get64(m + at), pn_get64(m + at + 8));
	pending_check();
}

static void got_ask(int from, const uint8_t *m, size_t n)
{
	if (n < 12 || (n - 12) % 8)
		return;
	dd.pend = grow(dd.pend, dd.npend, &dd.cap_pend, sizeof(*dd.pend));
	struct pending *q = &dd.pend[dd.npend++];
	*q = (struct pending){.from = from,
			      .id = pn_get32(m),
			      .item = pn_get32(m + 4),
			      .schedule = pn_get32(m + 8),
			      .n = (uint32_t)((n - 12) / 8),
			      .until_s = clock_s() + dd.wait_s};
	q->keys = malloc(8 * (size_t)q->n + 8);
	q->ends = malloc(8 * (size_t)q->n + 8);
	PN_ASSERT(q->keys != NULL && q->ends != NULL);
	for (uint32_t j = 0; j < q->n; j++) {
		q->keys[j] = pn_get64(m + 12 + 8 * (size_t)j);
		q->ends[j] = PN_UNIT_UNKNOWN;
	}
	pending_check();
}

/* The child's question answered (every part, or its time is over): the ends written to it. */
static void ask_finish(bool force)
{
	if (!dd.asking || (dd.left > 0 && !force))
		return;
	dd.asking = false;
	const uint8_t *p = (const uint8_t *)dd.ends;
	size_t len = 8 * (size_t)dd.n;
	for (size_t at = 0; at < len && dd.rep[1] >= 0;) {
		/* a socket: a child killed meanwhile is EPIPE here, not a SIGPIPE for the rank */
		ssize_t w = send(dd.rep[1], p + at, len - at, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* the child is gone */
		at += (size_t)w;
	}
}

/* Owner `from` answered part of the child's question. */
static void got_answer(int from, const uint8_t *m, size_t n)
{
	if (!dd.asking || n < 4 || pn_get32(m) != dd.id || !dd.part[from])
		return;
	size_t at = 4;
	for (uint32_t i = 0; i < dd.n && at + 8 <= n; i++) {
		if (dd.owner[i] != from)
			continue;
		dd.ends[i] = pn_get64(m + at);
		at += 8;
	}
	dd.part[from] = false;
	dd.left--;
	ask_finish(false);
}

/* Rank k is lost: what it owed is unknown, what it asked is dropped, nothing goes to it. */
static void got_lost(int k)
{
	if (k <= 0 || k >= lead.size || dd.lost[k])
		return;
	dd.lost[k] = true;
	if (dd.asking && dd.part[k]) {
		dd.part[k] = false;
		dd.left--;
		ask_finish(false);
	}
	pending_check();
}

/* A lookup message: true when `tag` is one (handled here). */
static bool route(int from, int tag, const uint8_t *m, size_t n)
{
	switch (tag) {
	case TAG_KEYS: got_keys(m, n); return true;
	case TAG_ASK: got_ask(from, m, n); return true;
	case TAG_ANSWER: got_answer(from, m, n); return true;
	case TAG_LOST:
		if (n >= 4)
			got_lost((int)pn_get32(m));
		return true;
	default: return false;
	}
}

/* Every lookup message waiting, handled; sends finished; waits that are over ended. */
static void pump(void)
{
	static const int tags[] = {TAG_KEYS, TAG_ASK, TAG_ANSWER, TAG_LOST};
	if (!dd.on)
		return;
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		for (;;) {
			int flag = 0, n;
			MPI_Status st;
			MPI_Iprobe(MPI_ANY_SOURCE, tags[i], MPI_COMM_WORLD, &flag, &st);
			if (!flag)
				break;
			MPI_Get_count(&st, MPI_BYTE, &n);
			uint8_t *m = malloc((size_t)n + 1);
			PN_ASSERT(m != NULL);
			MPI_Recv(m, n, MPI_BYTE, st.MPI_SOURCE, tags[i], MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			route(st.MPI_SOURCE, tags[i], m, (size_t)n);
			free(m);
		}
	}
	sends_done();
	if (dd.npend)
		pending_check();
	if (dd.asking && clock_s() >= dd.until_s)
		ask_finish(true); /* what has not come is unknown */
}

static void lookups_start(void)
{
	const char *w = getenv("PN_MPI_ASK_WAIT_S");
	dd.on = lead.size >= 2;
	dd.wait_s = w ? atof(w) : PN_MPI_ASK_WAIT_S;
	dd.wrong_end = getenv("PN_TEST_MPI_WRONG_END") && atoi(getenv("PN_TEST_MPI_WRONG_END"));
	dd.verify = getenv("PN_TEST_MPI_VERIFY") && atoi(getenv("PN_TEST_MPI_VERIFY"));
	dd.lost = calloc((size_t)lead.size + 1, sizeof(*dd.lost));
	dd.part = calloc((size_t)lead.size + 1, sizeof(*dd.part));
	dd.table = pn_unit_table_new();
	PN_ASSERT(dd.lost != NULL && dd.part != NULL);
}

/* ---- the channel, rank side ---- */
/* The child's KEYS frame: one batch per owner. */
static void frame_keys(const uint8_t *b, size_t n)
{
	if (n < 8 || (n - 8) % 16)
		return;
	uint32_t item = pn_get32(b), schedule = pn_get32(b + 4), nk = (uint32_t)((n - 8) / 16);
	for (int o = 1; o < lead.size; o++) {
		uint8_t *m = malloc(n);
		size_t len = 8;
		PN_ASSERT(m != NULL);
		memcpy(m, b, 8);
		for (uint32_t i = 0; i < nk; i++) {
			const uint8_t *k = b + 8 + 16 * (size_t)i;
			if (owner_of(item, schedule, pn_get64(k)) != o)
				continue;
			memcpy(m + len, k, 16);
			len += 16;
		}
		if (len > 8)
			lk_send(o, TAG_KEYS, m, len);
		else
			free(m);
	}
}

/* The child's ASK frame: one question per owner not lost; the rest unknown at once. */
static void frame_ask(const uint8_t *b, size_t n)
{
	static uint32_t next_id;
	if (n < 8 || (n - 8) % 8)
		return;
	uint32_t item = pn_get32(b), schedule = pn_get32(b + 4);
	free(dd.ends);
	free(dd.owner);
	dd.n = (uint32_t)((n - 8) / 8);
	dd.ends = malloc(8 * (size_t)dd.n + 8);
	dd.owner = malloc(sizeof(int) * ((size_t)dd.n + 1));
	PN_ASSERT(dd.ends != NULL && dd.owner != NULL);
	dd.id = ++next_id;
	dd.left = 0;
	dd.asking = true;
	dd.until_s = clock_s() + dd.wait_s + 2;
	for (int o = 0; o < lead.size; o++)
		dd.part[o] = false;
	for (uint32_t i = 0; i < dd.n; i++) {
		dd.ends[i] = PN_UNIT_UNKNOWN;
		dd.owner[i] = owner_of(item, schedule, pn_get64(b + 8 + 8 * (size_t)i));
	}
	for (int o = 1; o < lead.size; o++) {
		uint8_t *m = malloc(n + 4);
		size_t len = 12;
		PN_ASSERT(m != NULL);
		pn_put32(m, dd.id);
		memcpy(m + 4, b, 8);
		for (uint32_t i = 0; i < dd.n; i++) {
			if (dd.owner[i] != o)
				continue;
			memcpy(m + len, b + 8 + 8 * (size_t)i, 8);
			len += 8;
		}
		if (len == 12 || dd.lost[o]) {
			free(m);
			continue;
		}
		dd.part[o] = true;
		dd.left++;
		lk_send(o, TAG_ASK, m, len);
	}
	ask_finish(false); /* nothing asked: answered at once */
}

static void frame_counts(const uint8_t *b, size_t n)
{
	if (n != 32)
		return;
	dd.t.relearned += pn_get64(b);
	dd.t.asked += pn_get64(b + 8);
	dd.t.answered += pn_get64(b + 16);
	dd.t.reruns += pn_get64(b + 24);
}

/* Reads what the child's channel holds, its frames handled; block: until end of file. */
static void chan_poll(bool block)
{
	while (dd.req[0] >= 0) {
		struct pollfd p = {.fd = dd.req[0], .events = POLLIN};
		if (!block && poll(&p, 1, 0) <= 0)
			return;
		if (dd.len + 65536 > dd.cap) {
			dd.cap = dd.cap * 2 + 65536;
			dd.buf = realloc(dd.buf, dd.cap);
			PN_ASSERT(dd.buf != NULL);
		}
		ssize_t got = read(dd.req[0], dd.buf + dd.len, dd.cap - dd.len);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) {
			close(dd.req[0]);
			dd.req[0] = -1;
			dd.len = 0;
			return;
		}
		dd.len += (size_t)got;
		size_t at = 0;
		while (dd.len - at >= 8 && dd.len - at - 8 >= pn_get32(dd.buf + at + 4)) {
			uint32_t type = pn_get32(dd.buf + at), len = pn_get32(dd.buf + at + 4);
			const uint8_t *body = dd.buf + at + 8;
			if (type == FRAME_KEYS)
				frame_keys(body, len);
			else if (type == FRAME_ASK)
				frame_ask(body, len);
			else if (type == FRAME_COUNTS)
				frame_counts(body, len);
			at += 8 + (size_t)len;
		}
		memmove(dd.buf, dd.buf + at, dd.len - at);
		dd.len -= at;
	}
}

void pn_mpi_chan_open(void)
{
	PN_ASSERT(dd.req[0] < 0 && dd.rep[1] < 0);
	PN_ASSERT(pipe(dd.req) == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, dd.rep) == 0);
	dd.asking = false;
	dd.len = 0;
}

void pn_mpi_chan_parent(void)
{
	close(dd.req[1]);
	close(dd.rep[0]);
	dd.req[1] = dd.rep[0] = -1;
	(void)fcntl(dd.req[0], F_SETFL, O_NONBLOCK);
}

void pn_mpi_chan_close(void)
{
	if (dd.req[0] >= 0)
		chan_poll(true); /* the child is gone: its last frames (COUNTS) */
	if (dd.rep[1] >= 0)
		close(dd.rep[1]);
	dd.rep[1] = -1;
	dd.asking = false;
}

/* ---- the channel, child side ---- */
static bool write_all(int fd, const void *p, size_t len)
{
	for (size_t at = 0; at < len;) {
		ssize_t n = write(fd, (const uint8_t *)p + at, len - at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		at += (size_t)n;
	}
	return true;
}

static void frame(uint32_t type, const uint8_t *body, size_t len)
{
	uint8_t h[8];
	pn_put32(h, type);
	pn_put32(h + 4, (uint32_t)len);
	if (!write_all(dd.req[1], h, 8) || !write_all(dd.req[1], body, len))
		_exit(2); /* the rank is gone */
}

/* A frame's body: u32 item, u32 schedule, then n keys (with their ends when ends). */
static uint8_t *key_body(uint32_t schedule, const struct pn_unit_key *k, uint32_t n, bool ends,
			 size_t *len)
{
	size_t each = ends ? 16 : 8;
	uint8_t *b = malloc(8 + each * n);
	PN_ASSERT(b != NULL);
	pn_put32(b, dd.item);
	pn_put32(b + 4, schedule);
	for (uint32_t i = 0; i < n; i++) {
		pn_put64(b + 8 + each * i, k[i].key);
		if (ends)
			pn_put64(b + 16 + each * i, k[i].lsn);
	}
	*len = 8 + each * n;
	return b;
}

static void child_publish(void *arg, uint32_t schedule, const struct pn_unit_key *k, uint32_t n)
{
	size_t len;
	uint8_t *b = key_body(schedule, k, n, true, &len);
	if (n)
		frame(FRAME_KEYS, b, len);
	free(b);
}

static void child_ask(void *arg, uint32_t schedule, const struct pn_unit_key *k, uint32_t n,
		      uint64_t *ends)
{
	size_t len, got = 0;
	uint8_t *b = key_body(schedule, k, n, false, &len);
	frame(FRAME_ASK, b, len);
	free(b);
	uint8_t *in = malloc(8 * (size_t)n + 8);
	PN_ASSERT(in != NULL);
	while (got < 8 * (size_t)n) {
		ssize_t r = read(dd.rep[0], in + got, 8 * (size_t)n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	for (uint32_t i = 0; i < n; i++)
		ends[i] = got == 8 * (size_t)n ? pn_get64(in + 8 * (size_t)i) : PN_UNIT_UNKNOWN;
	free(in);
}

static void child_counts(void *arg, const struct pn_unit_result *r)
{
	uint8_t b[32];
	pn_put64(b, r->relearned);
	pn_put64(b + 8, r->lookups);
	pn_put64(b + 16, r->hits);
	pn_put64(b + 24, r->reruns);
	frame(FRAME_COUNTS, b, sizeof(b));
}

bool pn_mpi_chan_child(struct pn_unit_lookup *lk, uint32_t item)
{
	close(dd.req[0]);
	close(dd.rep[1]);
	dd.req[0] = dd.rep[1] = -1;
	dd.item = item;
	bool any = false;
	for (int o = 1; o < lead.size; o++)
		any |= !dd.lost[o];
	*lk = (struct pn_unit_lookup){.publish = child_publish,
				      .ask = child_ask,
				      .counts = child_counts,
				      .verify = dd.verify};
	return dd.on && any;
}

/* ---- the end of the job (M4): the tally, then sends drained and a barrier ---- */
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
		bool done = sends_done();
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
	lookups_start();
}

int pn_mpi_end(int rc, bool abort)
{
	struct pn_mpi_tally t;
	if (lead.rank == 0 && !lead.stopped)
		pn_mpi_stop(&t, false); /* rank 0 ended before its check (M1) */
	fflush(NULL);
	if (lead.lost_any || abort)
		MPI_Abort(MPI_COMM_WORLD, rc); /* M2 */
	quiesce();                             /* M4 */
	MPI_Finalize();
	pn_unit_table_free(dd.table);
	dd.table = NULL;
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
	struct pn_unit_lookup lk;
	bool on = pn_mpi_chan_child(&lk, item);
	uint8_t *bytes = fn(arg, item, u, on ? &lk : NULL, &len);
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
 * channel and the owners' messages served (M4). */
static void watch(struct work *w, uint32_t item, uint32_t unit)
{
	double beat_s = clock_s();
	for (;;) {
		struct pollfd p[2] = {{.fd = w->fd, .events = POLLIN},
				      {.fd = dd.req[0], .events = POLLIN}};
		int ready = poll(p, dd.req[0] >= 0 ? 2 : 1, dd.on ? 1 : PN_MPI_BEAT_MS / 5);
		if (ready > 0 && (p[0].revents & (POLLIN | POLLHUP)) && !take(w))
			return;
		chan_poll(false);
		pump();
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
	uint32_t item = pn_get32(m), unit = pn_get32(m + 4);
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
	pn_mpi_chan_open();
	fflush(NULL);
	struct work w = {.pid = fork(), .fd = p[0]};
	PN_ASSERT(w.pid >= 0);
	if (w.pid == 0) {
		close(p[0]);
		unit_child(fn, arg, item, &u, p[1], die);
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
	pn_put32(hello, (uint32_t)getpid());
	gethostname((char *)hello + 4, HOST_LEN - 1);
	send_to(0, TAG_HELLO, hello, 4 + strlen((char *)hello + 4));
	bool first = true;
	for (;;) {
		MPI_Status st;
		int n, flag = 0;
		pump(); /* M4: owners' messages while idle */
		MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (!flag) {
			usleep(dd.on ? 1000 : 10000);
			continue;
		}
		MPI_Get_count(&st, MPI_BYTE, &n);
		uint8_t *m = malloc((size_t)n + 1);
		PN_ASSERT(m != NULL);
		MPI_Recv(m, n, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (!route(0, st.MPI_TAG, m, (size_t)n) && st.MPI_TAG == TAG_UNIT &&
		    n == 8 + PN_UNIT_BYTES)
			serve_unit(fn, arg, m, &first);
		free(m);
		if (st.MPI_TAG == TAG_STOP) {
			uint8_t *t = malloc(48);
			PN_ASSERT(t != NULL);
			tally_bytes(&dd.t, t);
			lk_send(0, TAG_TALLY, t, 48);
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

void pn_mpi_send_unit(int rank, uint32_t item, uint32_t unit, const struct pn_unit *u)
{
	struct rank *k = &lead.ranks[rank];
	uint8_t m[8 + PN_UNIT_BYTES];
	PN_ASSERT(pn_mpi_idle(rank));
	pn_put32(m, item);
	pn_put32(m + 4, unit);
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
		got_lost(r);
		for (int o = 1; o < lead.size; o++) { /* M4: its keys are unknown */
			uint8_t *m = malloc(4);
			PN_ASSERT(m != NULL);
			pn_put32(m, (uint32_t)r);
			if (!lead.ranks[o].lost)
				lk_send(o, TAG_LOST, m, 4);
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
	k->heard_s = clock_s();
	if (tag == TAG_HELLO && n >= 4) {
		k->pid = pn_get32(m);
		snprintf(k->host, sizeof(k->host), "%.*s", (int)PN_MIN(n - 4, HOST_LEN - 1),
			 (const char *)m + 4);
		k->hello = true;
		return false;
	}
	if ((tag != TAG_RESULT && tag != TAG_FAILED) || n < 8 || k->lost || !k->busy)
		return false; /* a BEAT, or a lost rank's late word (M2) */
	uint32_t item = pn_get32(m), unit = pn_get32(m + 4);
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
		chan_poll(false); /* M4: rank 0's own child's frames */
		pump();
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
		if (route(st.MPI_SOURCE, st.MPI_TAG, m, (size_t)n)) {
			free(m);
			continue;
		}
		lead.messages++;
		lead.bytes += (uint64_t)n;
		bool answer = receive(st.MPI_SOURCE, st.MPI_TAG, m, (size_t)n, ev);
		free(m);
		if (answer)
			return true;
	} while (clock_s() < until_s);
	return false;
}

/* M4: each rank's TALLY after STOP, at most 10 s (lookups served meanwhile). */
static void tallies(struct pn_mpi_tally *t)
{
	int left = pn_mpi_live();
	double until_s = clock_s() + 10;
	while (left > 0 && clock_s() < until_s) {
		int flag = 0, n;
		MPI_Status st;
		pump();
		MPI_Iprobe(MPI_ANY_SOURCE, TAG_TALLY, MPI_COMM_WORLD, &flag, &st);
		if (!flag) {
			usleep(1000);
			continue;
		}
		uint8_t m[48] = {0};
		MPI_Get_count(&st, MPI_BYTE, &n);
		MPI_Recv(m, PN_MIN(n, 48), MPI_BYTE, st.MPI_SOURCE, TAG_TALLY, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
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
			send_to(k, TAG_STOP, NULL, 0);
	lead.stopped = true;
	*t = dd.t; /* rank 0's own child's lookups */
	if (wait && lead.ranks)
		tallies(t);
	t->messages = lead.messages;
	t->bytes = lead.bytes;
}
#endif

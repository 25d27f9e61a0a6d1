/*
 * mpilookup.c: the lookups between ranks (model layer, compiled only with PN_MPI;
 * mpilookup.h, the rule mpirank.h MR4).
 */
#include "mpilookup.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { FRAME_KEYS = 1, FRAME_ASK, FRAME_COUNTS };

static int lk_rank, lk_size; /* this rank, the job's ranks (pn_mpi_lk_start) */

double pn_mpi_clock_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- lookups (MR4) ---- */
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
	PN_ASSERT(lk_size >= 2);
	return 1 + (int)(pn_unit_key_hash(item, schedule, key) % (uint64_t)(lk_size - 1));
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
	if (rank != lk_rank) {
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
	lk_send(to, PN_MPI_TAG_ANSWER, m, 4 + 8 * (size_t)n);
}

/* Pending questions answered when every key is known, or the wait is over, or asked by a
 * lost rank (dropped). */
static void pending_check(void)
{
	double now = pn_mpi_clock_s();
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
			      .until_s = pn_mpi_clock_s() + dd.wait_s};
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
	if (k <= 0 || k >= lk_size || dd.lost[k])
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
	case PN_MPI_TAG_KEYS: got_keys(m, n); return true;
	case PN_MPI_TAG_ASK: got_ask(from, m, n); return true;
	case PN_MPI_TAG_ANSWER: got_answer(from, m, n); return true;
	case PN_MPI_TAG_LOST:
		if (n >= 4)
			got_lost((int)pn_get32(m));
		return true;
	default: return false;
	}
}

/* Every lookup message waiting, handled; sends finished; waits that are over ended. */
static void pump(void)
{
	static const int tags[] = {PN_MPI_TAG_KEYS, PN_MPI_TAG_ASK, PN_MPI_TAG_ANSWER,
				   PN_MPI_TAG_LOST};
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
	if (dd.asking && pn_mpi_clock_s() >= dd.until_s)
		ask_finish(true); /* what has not come is unknown */
}

static void lookups_start(void)
{
	const char *w = getenv("PN_MPI_ASK_WAIT_S");
	dd.on = lk_size >= 2;
	dd.wait_s = w ? atof(w) : PN_MPI_ASK_WAIT_S;
	dd.wrong_end = getenv("PN_TEST_MPI_WRONG_END") && atoi(getenv("PN_TEST_MPI_WRONG_END"));
	dd.verify = getenv("PN_TEST_MPI_VERIFY") && atoi(getenv("PN_TEST_MPI_VERIFY"));
	dd.lost = calloc((size_t)lk_size + 1, sizeof(*dd.lost));
	dd.part = calloc((size_t)lk_size + 1, sizeof(*dd.part));
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
	for (int o = 1; o < lk_size; o++) {
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
			lk_send(o, PN_MPI_TAG_KEYS, m, len);
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
	dd.until_s = pn_mpi_clock_s() + dd.wait_s + 2;
	for (int o = 0; o < lk_size; o++)
		dd.part[o] = false;
	for (uint32_t i = 0; i < dd.n; i++) {
		dd.ends[i] = PN_UNIT_UNKNOWN;
		dd.owner[i] = owner_of(item, schedule, pn_get64(b + 8 + 8 * (size_t)i));
	}
	for (int o = 1; o < lk_size; o++) {
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
		lk_send(o, PN_MPI_TAG_ASK, m, len);
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
	for (int o = 1; o < lk_size; o++)
		any |= !dd.lost[o];
	*lk = (struct pn_unit_lookup){.publish = child_publish,
				      .ask = child_ask,
				      .counts = child_counts,
				      .verify = dd.verify};
	return dd.on && any;
}

void pn_mpi_lk_start(int rank, int size)
{
	lk_rank = rank;
	lk_size = size;
	lookups_start();
}

void pn_mpi_lk_free(void)
{
	pn_unit_table_free(dd.table);
	dd.table = NULL;
}

bool pn_mpi_lk_on(void) { return dd.on; }
int pn_mpi_lk_frames_fd(void) { return dd.req[0]; }
void pn_mpi_lk_pump(void) { pump(); }
bool pn_mpi_lk_route(int from, int tag, const uint8_t *m, size_t n)
{
	return route(from, tag, m, n);
}
void pn_mpi_lk_lost(int k) { got_lost(k); }
void pn_mpi_lk_send(int rank, int tag, uint8_t *buf, size_t len) { lk_send(rank, tag, buf, len); }
bool pn_mpi_lk_sends_done(void) { return sends_done(); }
void pn_mpi_lk_chan_poll(bool block) { chan_poll(block); }
const struct pn_mpi_tally *pn_mpi_lk_tally(void) { return &dd.t; }

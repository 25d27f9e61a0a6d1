/*
 * exec_procs.c: the process executor (model layer; exec_procs.h EP1-EP5, exec.h E1-E6): a
 * pool of child processes, each a worker that runs unit after unit (EP5), every pipe drained
 * with one poll().
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "exec_procs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MSG_PROGRESS = 1, MSG_RESULT }; /* EP2 */

/* ---- the child ---- */
struct child_ctx {
	int fd;
	double last_s;
};

/* The monotonic wall clock: only to space progress messages, never for the simulation. */
static double clock_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(2); /* the leader is gone */
		p += n;
		len -= (size_t)n;
	}
}

static void send_msg(int fd, uint32_t type, const void *payload, size_t len)
{
	uint32_t h[2] = {type, (uint32_t)len};
	PN_ASSERT(len <= UINT32_MAX);
	write_all(fd, h, sizeof(h));
	write_all(fd, payload, len);
}

static void child_progress(void *arg, const struct pn_check_result *res)
{
	struct child_ctx *cc = arg;
	double now = clock_s();
	if ((now - cc->last_s) * 1000 < PN_EXEC_TICK_MS)
		return;
	cc->last_s = now;
	uint64_t m[2] = {res->crash_states, res->schedules_explored};
	send_msg(cc->fd, MSG_PROGRESS, m, sizeof(m));
}

/* The next unit from the leader's request socket (EP5): false when the leader closed it. */
static bool next_unit(int req, struct pn_exec_unit *u)
{
	uint8_t *at = (uint8_t *)u;
	size_t len = sizeof(*u);
	while (len) {
		ssize_t n = read(req, at, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && len == sizeof(*u))
			return false;
		if (n <= 0)
			_exit(2); /* half a unit: the leader is gone */
		at += n;
		len -= (size_t)n;
	}
	return true;
}

/* One unit run in this child, its bytes sent (EP2). */
static void run_unit(struct pn_pool *p, const struct pn_exec_unit *u, int fd)
{
	struct child_ctx cc = {.fd = fd, .last_s = clock_s()};
	struct pn_unit_lookup lk;
	struct pn_exec_ctx ctx = {.progress = child_progress, .progress_arg = &cc, .stop = p->stop};
	if (p->chan && !u->leader && p->chan->child(&lk, u->entry))
		ctx.lookup = &lk;
	size_t len = 0;
	uint8_t *bytes = p->w->run(p->w->arg, u, &ctx, &len);
	send_msg(fd, MSG_RESULT, bytes, len);
	free(bytes);
}

/* A child: its unit run and its bytes sent (EP2); a worker (req >= 0, EP5) then runs the
 * units the leader sends until the leader closes req; exit. SIGINT stays ignored when the
 * leader ignored it (a background job); else SIGINT and SIGTERM kill the child (E5). They are
 * blocked from before the fork until the child's own dispositions are set (mask: the
 * leader's), so that a stop sent at once never runs a handler the child inherited. */
static _Noreturn void child(struct pn_pool *p, const struct pn_exec_unit *u, int fd, int req,
			    pid_t parent, const sigset_t *mask)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
	sigaction(SIGINT, NULL, &old);
	if (old.sa_handler != SIG_IGN)
		sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(2);
	for (uint32_t i = 0; i < p->n; i++) { /* the other children's ends (EP5: their EOF) */
		if (p->slots[i].pid > 0) {
			close(p->slots[i].fd);
			if (p->slots[i].req >= 0)
				close(p->slots[i].req);
		}
	}
	struct pn_exec_unit cur = *u;
	do
		run_unit(p, &cur, fd);
	while (req >= 0 && next_unit(req, &cur));
	_exit(0);
}

/* EP4: whether this unit's child is to die at once. */
static bool killed_by_test(const struct pn_exec_unit *u)
{
	static uint64_t killed;
	uint64_t times = 0;
	const char *env = getenv("PN_TEST_KILL_UNIT");
	if (!env || u->leader || u->entry != 0 || u->id != 0)
		return false;
	times = strtoull(env, NULL, 10);
	if (killed >= times)
		return false;
	killed++;
	return true;
}

/* ---- the leader ---- */
static bool drain(struct pn_pool_slot *s);

/* The one place a slot's unit comes and goes, its edge asserted (EP5): a slot with a process
 * and no unit takes one (a new child, or an idle worker), a slot with one hands it back (its
 * process done with it, or gone); the pool's count of busy slots moves with it. */
static void slot_busy(struct pn_pool *p, struct pn_pool_slot *s, bool busy)
{
	PN_ASSERT(s->pid > 0 && s->busy != busy);
	s->busy = busy;
	if (busy)
		p->busy++;
	else
		p->busy--;
}

void pn_pool_init(struct pn_pool *p, uint32_t n, const struct pn_exec_work *w,
		  const volatile sig_atomic_t *stop, const struct pn_pool_channel *chan)
{
	PN_ASSERT(n >= 1);
	*p = (struct pn_pool){.n = n, .w = w, .stop = stop, .chan = chan};
	p->slots = calloc(n, sizeof(*p->slots));
	p->pfd = calloc(n, sizeof(*p->pfd));
	p->who = calloc(n, sizeof(*p->who));
	PN_ASSERT(p->slots != NULL && p->pfd != NULL && p->who != NULL);
	for (uint32_t i = 0; i < n; i++)
		p->slots[i].req = -1;
}

void pn_pool_free(struct pn_pool *p)
{
	PN_ASSERT(p->running == 0 && p->busy == 0);
	free(p->slots);
	free(p->pfd);
	free(p->who);
	p->slots = NULL;
}

/* The slot's process is gone or going (its pipe at EOF, or killed): reaped, its ends closed.
 * Returns its exit status. */
static int reap_process(struct pn_pool *p, struct pn_pool_slot *s)
{
	int status = s->status;
	while (!s->exited && waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(s->fd);
	if (s->req >= 0)
		close(s->req);
	free(s->buf);
	p->running--;
	return status;
}

/* EP5: an idle worker that was told to end or killed: its pipe read to EOF, reaped, the slot
 * emptied. */
static void worker_gone(struct pn_pool *p, struct pn_pool_slot *s)
{
	PN_ASSERT(s->pid > 0 && !s->busy && s->req >= 0);
	while (drain(s))
		;
	(void)reap_process(p, s);
	*s = (struct pn_pool_slot){.fd = -1, .req = -1};
}

/* EP5: slot i's idle worker ends (its request socket shut). */
static void retire(struct pn_pool *p, uint32_t i)
{
	shutdown(p->slots[i].req, SHUT_WR);
	worker_gone(p, &p->slots[i]);
}

/* EP5: u handed to slot i's idle worker; false when the worker is gone (reaped here). */
static bool hand_to_worker(struct pn_pool *p, uint32_t i, const struct pn_exec_unit *u)
{
	struct pn_pool_slot *s = &p->slots[i];
	const uint8_t *at = (const uint8_t *)u;
	size_t len = sizeof(*u);
	while (len) {
		ssize_t n = send(s->req, at, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* it died idle: reaped, and the unit goes to a new child */
			kill(s->pid, SIGKILL);
			worker_gone(p, s);
			return false;
		}
		at += n;
		len -= (size_t)n;
	}
	s->unit = *u;
	slot_busy(p, s, true);
	return true;
}

void pn_pool_spawn(struct pn_pool *p, uint32_t i, const struct pn_exec_unit *u)
{
	struct pn_pool_slot *s = &p->slots[i];
	bool die = killed_by_test(u), chan = p->chan && !u->leader;
	bool worker = !die && !u->leader && !p->chan; /* EP5 */
	PN_ASSERT(i < p->n && !s->busy);
	if (s->pid > 0 && worker && hand_to_worker(p, i, u))
		return;
	if (s->pid > 0)
		retire(p, i); /* u needs a child of its own (EP5) */
	int fds[2], req[2] = {-1, -1};
	PN_ASSERT(pipe(fds) == 0);
	(void)fcntl(fds[1], F_SETPIPE_SZ, PN_POOL_PIPE_BYTES); /* EP1; the kernel may round up */
	if (worker)
		PN_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, req) == 0);
	if (chan)
		p->chan->open();
	fflush(NULL);
	sigset_t stops, mask;
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigprocmask(SIG_BLOCK, &stops, &mask);
	pid_t parent = getpid(), pid = fork();
	PN_ASSERT(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		if (worker)
			close(req[0]);
		if (die)
			raise(SIGKILL);
		child(p, u, fds[1], req[1], parent, &mask);
	}
	sigprocmask(SIG_SETMASK, &mask, NULL);
	close(fds[1]);
	if (worker)
		close(req[1]);
	if (chan)
		p->chan->parent();
	*s = (struct pn_pool_slot){.unit = *u, .pid = pid, .fd = fds[0], .req = req[0]};
	p->running++;
	slot_busy(p, s, true);
}

static void handle_msg(struct pn_pool_slot *s, uint32_t type, const uint8_t *body, uint32_t len)
{
	if (type == MSG_PROGRESS && len == 16) {
		uint64_t m[2];
		memcpy(m, body, sizeof(m));
		s->states_live = m[0];
		s->schedules_live = m[1];
	} else if (type == MSG_RESULT && !s->got) {
		s->result = malloc(len + 1);
		PN_ASSERT(s->result != NULL);
		memcpy(s->result, body, len);
		s->result_len = len;
		s->got = true;
	}
}

/* Reads what the child's pipe holds now; false at end of file. */
static bool drain(struct pn_pool_slot *s)
{
	uint8_t chunk[65536];
	ssize_t got = read(s->fd, chunk, sizeof(chunk));
	if (got < 0)
		return errno == EINTR || errno == EAGAIN;
	if (got == 0)
		return false;
	if (s->len + (size_t)got > s->cap) {
		s->cap = PN_MAX(s->cap * 2, s->len + (size_t)got);
		s->buf = realloc(s->buf, s->cap);
		PN_ASSERT(s->buf != NULL);
	}
	memcpy(s->buf + s->len, chunk, (size_t)got);
	s->len += (size_t)got;
	size_t at = 0;
	uint32_t h[2];
	while (s->len - at >= sizeof(h)) {
		memcpy(h, s->buf + at, sizeof(h));
		if (s->len - at - sizeof(h) < h[1])
			break;
		handle_msg(s, h[0], s->buf + at + sizeof(h), h[1]);
		at += sizeof(h) + h[1];
	}
	memmove(s->buf, s->buf + at, s->len - at);
	s->len -= at;
	return true;
}

/* Why a child gave no result (E6). */
static void no_result(int status, char *why, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(why, len, "the checking process died of signal %d", WTERMSIG(status));
	else
		snprintf(why, len, "the checking process exited with status %d before its result",
			 WEXITSTATUS(status));
}

/* The unit of slot s comes back (E2): merged, dropped or failed; the slot runs none after. */
static void hand_back(struct pn_pool *p, struct pn_pool_slot *s, int status)
{
	struct pn_pool_slot was = *s;
	slot_busy(p, s, false);
	s->got = s->cancelled = false;
	s->result = NULL;
	s->result_len = 0;
	s->states_live = s->schedules_live = 0;
	if (p->chan && !was.unit.leader)
		p->chan->close(); /* mpirank.h MR4: the child's last frames */
	bool whole = was.got;     /* a whole RESULT is the last thing a unit sends (EP2) */
	char why[400], bad[256] = "";
	if (was.cancelled ||
	    (!was.unit.leader && p->w->cancelled(p->w->arg, was.unit.entry, was.unit.id)) ||
	    (!whole && *p->stop)) {
		free(was.result);
		return; /* dropped (E2), or stopped before it finished (E5) */
	}
	if (whole &&
	    p->w->done(p->w->arg, &was.unit, was.result, was.result_len, bad, sizeof(bad))) {
		free(was.result);
		return;
	}
	if (whole)
		snprintf(why, sizeof(why), "its result does not decode: %s", bad);
	else
		no_result(status, why, sizeof(why));
	free(was.result);
	p->w->failed(p->w->arg, &was.unit, why);
}

/* The child closed its pipe: reap it, hand its unit back (E2). */
static void reap(struct pn_pool *p, struct pn_pool_slot *s)
{
	int status = reap_process(p, s);
	if (s->busy)
		hand_back(p, s, status);
	*s = (struct pn_pool_slot){.fd = -1, .req = -1};
}

void pn_pool_cancel(struct pn_pool *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		struct pn_pool_slot *s = &p->slots[i];
		if (s->pid > 0 && s->busy && !s->cancelled && !s->unit.leader &&
		    p->w->cancelled(p->w->arg, s->unit.entry, s->unit.id)) {
			s->cancelled = true;
			kill(s->pid, SIGKILL); /* not reaped yet: the pid is still its own */
		}
	}
}

int pn_pool_collect(struct pn_pool *p, int wait_ms)
{
	struct pollfd *pfd = p->pfd;
	uint32_t *who = p->who, m = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		if (p->slots[i].pid > 0) {
			pfd[m] = (struct pollfd){.fd = p->slots[i].fd, .events = POLLIN};
			who[m++] = i;
		}
	}
	PN_ASSERT(m == p->running);
	int ready = m ? poll(pfd, m, wait_ms) : 0;
	if (ready <= 0) {
		PN_ASSERT(ready == 0 || errno == EINTR);
		return 0;
	}
	for (uint32_t i = 0; i < m; i++) {
		struct pn_pool_slot *s = &p->slots[who[i]];
		if (!pfd[i].revents)
			continue;
		if (!drain(s)) {
			reap(p, s);
			pn_pool_cancel(p);
		} else if (s->busy && s->got && s->req >= 0) {
			hand_back(p, s, 0); /* EP5: a worker's unit done, the worker idle */
			pn_pool_cancel(p);
		}
	}
	return ready;
}

void pn_pool_stop(struct pn_pool *p)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (p->slots[i].pid > 0)
			kill(p->slots[i].pid, SIGTERM);
	for (int ms = 0; ms < PN_EXEC_KILL_GRACE_MS; ms += 10) {
		bool alive = false;
		for (uint32_t i = 0; i < p->n; i++) {
			struct pn_pool_slot *s = &p->slots[i];
			if (s->pid > 0 && !s->exited &&
			    waitpid(s->pid, &s->status, WNOHANG) == s->pid)
				s->exited = true;
			alive |= s->pid > 0 && !s->exited;
		}
		if (!alive)
			break;
		usleep(10000);
	}
	for (uint32_t i = 0; i < p->n; i++) {
		struct pn_pool_slot *s = &p->slots[i];
		if (s->pid <= 0)
			continue;
		if (!s->exited)
			kill(s->pid, SIGKILL); /* not reaped yet: the pid is still its own */
		while (drain(s))
			;
		reap(p, s);
	}
}

void pn_pool_retire(struct pn_pool *p)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (p->slots[i].pid > 0 && !p->slots[i].busy)
			retire(p, i);
}

void pn_pool_live(const struct pn_pool *p, uint64_t *states, uint64_t *schedules)
{
	*states = *schedules = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		if (p->slots[i].busy && !p->slots[i].unit.leader) {
			*states += p->slots[i].states_live;
			*schedules += p->slots[i].schedules_live;
		}
	}
}

/* ---- the executor's row ---- */
static void tick(const struct pn_exec_work *w, const struct pn_pool *p)
{
	uint64_t states, schedules;
	pn_pool_live(p, &states, &schedules);
	if (w->tick)
		w->tick(w->arg, states, schedules);
}

static void procs_lead(struct pn_exec *x, const struct pn_exec_work *w)
{
	struct pn_pool p;
	pn_pool_init(&p, x->workers, w, x->stop, NULL);
	for (;;) {
		for (uint32_t i = 0; i < p.n && !*x->stop; i++) {
			struct pn_exec_unit u;
			if (!p.slots[i].busy && w->next(w->arg, &u))
				pn_pool_spawn(&p, i, &u);
		}
		tick(w, &p);
		if (p.busy == 0 || *x->stop)
			break;
		pn_pool_collect(&p, PN_EXEC_TICK_MS);
		tick(w, &p);
	}
	if (*x->stop)
		pn_pool_stop(&p);
	else
		pn_pool_retire(&p);
	pn_pool_free(&p);
}

const struct pn_exec_ops pn_exec_procs_ops = {
	.name = "processes",
	.lead = procs_lead,
};

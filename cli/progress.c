/*
 * progress.c: the terminal progress line (cli layer). See progress.h.
 */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double pn_progress_clock_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "m:ss", or "h:mm:ss" from an hour. */
static void clock_text(char *buf, size_t len, double s)
{
	unsigned long t = s > 0 ? (unsigned long)(s + 0.5) : 0;
	if (t >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
}

void pn_progress_init(struct pn_progress *p, const char *cmd, const char *units,
		      const char *counted, size_t total)
{
	*p = (struct pn_progress){.cmd = cmd,
				  .units = units,
				  .counted = counted,
				  .total = total,
				  .tty = isatty(2) == 1};
	p->t0_s = pn_progress_clock_s();
	p->last_s = p->t0_s - 1.0;
}

double pn_progress_eta_s(double elapsed_s, double work, size_t total)
{
	if (!(work > 0) || elapsed_s < 0)
		return -1;
	double left = (double)total - work;
	return left > 0 ? elapsed_s * left / work : 0;
}

double pn_progress_elapsed(const struct pn_progress *p)
{
	return (p->end_s > 0 ? p->end_s : pn_progress_clock_s()) - p->t0_s;
}

double pn_progress_rate(const struct pn_progress *p, uint64_t count)
{
	double dt = pn_progress_elapsed(p);
	return dt > 0 ? (double)count / dt : 0.0;
}

void pn_progress_finish(struct pn_progress *p, size_t done, uint64_t count)
{
	if (p->end_s > 0)
		return;
	p->end_s = pn_progress_clock_s();
	pn_progress_update(p, done, count, true);
}

void pn_progress_update(struct pn_progress *p, size_t done, uint64_t count, bool force)
{
	if (!p->tty)
		return;
	double now = pn_progress_clock_s(), dt = pn_progress_elapsed(p);
	if (!force && (now - p->last_s) * 1000 < PN_PROGRESS_INTERVAL_MS)
		return;
	p->last_s = now;
	char elapsed[32], eta[40] = "ETA ?";
	clock_text(elapsed, sizeof(elapsed), dt);
	double left_s = pn_progress_eta_s(dt, p->work > 0 ? p->work : (double)done, p->total);
	if (done >= p->total) {
		snprintf(eta, sizeof(eta), "done");
	} else if (left_s >= 0) {
		char left[32];
		clock_text(left, sizeof(left), left_s);
		snprintf(eta, sizeof(eta), "ETA %s", left);
	}
	char schedules[40] = "", parts[48] = "";
	if (p->schedules)
		snprintf(schedules, sizeof(schedules), ", %llu schedules",
			 (unsigned long long)p->schedules);
	if (p->parts_made)
		snprintf(parts, sizeof(parts), ", %llu/%llu units",
			 (unsigned long long)p->parts_done, (unsigned long long)p->parts_made);
	fprintf(stderr, "\r\033[K%s: %zu/%zu %s%s, %llu %s, %.0f %s/s%s, %s elapsed, %s", p->cmd,
		done, p->total, p->units, parts, (unsigned long long)count, p->counted,
		pn_progress_rate(p, count), p->counted, schedules, elapsed, eta);
	fflush(stderr);
	p->drawn = true;
}

void pn_progress_clear(struct pn_progress *p)
{
	if (!p->drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->drawn = false;
}

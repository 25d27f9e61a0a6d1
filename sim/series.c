/*
 * series.c: the time series of one simulated run (sim layer). See series.h (SE1-SE3).
 */
#include "series.h"

#include <string.h>

#include "engine.h"

const char *const pn_series_col_names[PN_SC_COUNT] = {
	"time_ns",   "events",      "transactions",       "commits",       "wal_bytes",
	"fpi_count", "fpi_bytes",   "data_bytes_written", "data_writes",   "fsyncs",
	"shifts",    "checkpoints", "commit_latency_ns",  "commits_timed",
};

void pn_series_init(struct pn_series *s, const struct pn_engine *e)
{
	memset(s, 0, sizeof(*s));
	s->every_events = 1;
	s->next_at = 1;
	s->ckpt_every = 1;
	pn_engine_ckpt_seqs(e, &s->seen_begun, &s->seen_done);
	s->generations = pn_engine_geometry(e).generations;
	PN_ASSERT(s->seen_done <= s->seen_begun);
}

/* SE1: keeps the samples at multiples of twice the stride (indexes 1, 3, 5, ...). */
static void halve_samples(struct pn_series *s)
{
	PN_ASSERT(s->n == PN_SERIES_CAP);
	for (uint32_t i = 0; i < PN_SERIES_CAP / 2; i++)
		memcpy(s->v[i], s->v[2 * i + 1], sizeof(s->v[i]));
	s->n = PN_SERIES_CAP / 2;
	s->every_events *= 2;
}

/* SE4: adds the latencies acknowledged since the last look (from the first when `whole`). */
static void sum_latencies(struct pn_series *s, const struct pn_engine *e, bool whole)
{
	struct pn_acks_view acks;
	pn_engine_acks(e, &acks);
	if (whole || acks.nlat < s->lat_seen) /* whole, or the log was drained (not in sim/) */
		s->lat_seen = s->lat_sum_ns = 0;
	for (; s->lat_seen < acks.nlat; s->lat_seen++)
		s->lat_sum_ns += acks.latencies[s->lat_seen];
	PN_ASSERT(s->lat_seen == acks.nlat);
}

static void take_sample(struct pn_series *s, const struct pn_engine *e, uint64_t now_ns,
			uint64_t events)
{
	sum_latencies(s, e, false);
	const struct pn_metrics *m = pn_engine_metrics(e);
	if (s->n == PN_SERIES_CAP)
		halve_samples(s);
	PN_ASSERT(s->n < PN_SERIES_CAP);
	uint64_t *v = s->v[s->n++];
	v[PN_SC_TIME_NS] = now_ns;
	v[PN_SC_EVENTS] = events;
	v[PN_SC_TRANSACTIONS] = m->transactions;
	v[PN_SC_COMMITS] = m->commits;
	v[PN_SC_WAL_BYTES] = m->wal_bytes;
	v[PN_SC_FPI_COUNT] = m->fpi_count;
	v[PN_SC_FPI_BYTES] = m->fpi_bytes;
	v[PN_SC_DATA_BYTES] = m->data_bytes_written;
	v[PN_SC_DATA_WRITES] = m->data_writes;
	v[PN_SC_FSYNCS] = m->fsyncs;
	v[PN_SC_SHIFTS] = m->shifts;
	v[PN_SC_CHECKPOINTS] = m->checkpoints;
	v[PN_SC_COMMIT_LATENCY_NS] = s->lat_sum_ns;
	v[PN_SC_COMMITS_TIMED] = s->lat_seen;
}

/* The stride a sample is due under: as it will be after a halving (SE1: multiples only). */
static uint64_t stride_due(const struct pn_series *s)
{
	return s->n == PN_SERIES_CAP ? 2 * s->every_events : s->every_events;
}

/* At or past next_at: the sample if events is a multiple of the stride, then the next
 * multiple after events under the stride as it is now (a sample may have doubled it). */
static void sample_due(struct pn_series *s, const struct pn_engine *e, uint64_t now_ns,
		       uint64_t events)
{
	if (events % stride_due(s) == 0)
		take_sample(s, e, now_ns, events);
	uint64_t stride = stride_due(s);
	s->next_at = (events / stride + 1) * stride;
	PN_ASSERT(s->next_at > events && s->next_at % stride == 0);
}

/* SE3: adds the lowest-numbered pages that shifted, up to PN_SERIES_PAGES. */
static void choose_pages(struct pn_series *s, const struct pn_engine *e)
{
	uint32_t heap_pages = pn_engine_geometry(e).heap_pages;
	for (uint32_t p = 0; p < heap_pages && s->npages < PN_SERIES_PAGES; p++) {
		uint8_t active, baseline;
		if (!pn_engine_page_slots(e, p, &active, &baseline) ||
		    (active == 0 && baseline == 0))
			continue;
		bool chosen = false;
		for (uint32_t i = 0; i < s->npages && !chosen; i++)
			chosen = s->pages[i] == p;
		if (!chosen)
			s->pages[s->npages++] = p;
	}
}

/* SE2: keeps every second checkpoint held (numbers 1, 1 + 2 * ckpt_every, ...). */
static void halve_ckpts(struct pn_series *s)
{
	PN_ASSERT(s->nckpt == PN_SERIES_CKPT_CAP);
	for (uint32_t i = 0; i < PN_SERIES_CKPT_CAP / 2; i++)
		s->ckpt[i] = s->ckpt[2 * i];
	s->nckpt = PN_SERIES_CKPT_CAP / 2;
	s->ckpt_every *= 2;
}

static void ckpt_ended(struct pn_series *s, const struct pn_engine *e, uint64_t seq,
		       uint64_t now_ns)
{
	uint64_t number = ++s->ckpt_done;
	if ((number - 1) % s->ckpt_every != 0)
		return;
	if (s->nckpt == PN_SERIES_CKPT_CAP) {
		halve_ckpts(s);
		if ((number - 1) % s->ckpt_every != 0)
			return;
	}
	struct pn_series_ckpt *c = &s->ckpt[s->nckpt++];
	memset(c, 0, sizeof(*c));
	c->number = number;
	c->begin_ns = s->begin_ns[seq % PN_SERIES_PENDING];
	c->end_ns = now_ns;
	const struct pn_metrics *m = pn_engine_metrics(e);
	c->wal_bytes = m->wal_bytes;
	c->fpi_count = m->fpi_count;
	c->commits = m->commits;
	c->shifts = m->shifts;
	memset(c->active, PN_SERIES_UNKNOWN, sizeof(c->active));
	memset(c->baseline, PN_SERIES_UNKNOWN, sizeof(c->baseline));
	uint8_t active, baseline;
	if (s->generations <= 1 || !pn_engine_page_slots(e, 0, &active, &baseline))
		return;
	choose_pages(s, e);
	for (uint32_t i = 0; i < s->npages; i++)
		pn_engine_page_slots(e, s->pages[i], &c->active[i], &c->baseline[i]);
}

void pn_series_observe(struct pn_series *s, const struct pn_engine *e, uint64_t now_ns,
		       uint64_t events)
{
	PN_ASSERT(s->every_events > 0);
	PN_ASSERT(events > s->events_seen);
	s->events_seen = events;
	if (events >= s->next_at) /* no multiple of the stride lies before next_at */
		sample_due(s, e, now_ns, events);
	uint64_t begun, done;
	pn_engine_ckpt_seqs(e, &begun, &done);
	while (s->seen_begun < begun)
		s->begin_ns[++s->seen_begun % PN_SERIES_PENDING] = now_ns;
	while (s->seen_done < done)
		ckpt_ended(s, e, ++s->seen_done, now_ns);
	PN_ASSERT(s->n <= PN_SERIES_CAP && s->nckpt <= PN_SERIES_CKPT_CAP);
}

void pn_series_finish(struct pn_series *s, const struct pn_engine *e, uint64_t now_ns,
		      uint64_t events)
{
	if (s->n > 0 && s->v[s->n - 1][PN_SC_EVENTS] == events)
		s->n--;            /* the last event was sampled before the totals were complete */
	sum_latencies(s, e, true); /* the end's percentiles reordered the log (SE4) */
	take_sample(s, e, now_ns, events);
	PN_ASSERT(s->n >= 1 && s->n <= PN_SERIES_CAP);
}

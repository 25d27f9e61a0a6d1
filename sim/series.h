/*
 * series.h: the time series of one simulated run (sim layer), what `penumbra report` plots:
 * cumulative counters sampled over virtual time, the checkpoints' begin and end, and for
 * Umbra each sampled page's active and baseline slot at every checkpoint's end.
 *
 * It only reads the engine (after each event, pn_world_step) and never changes it, so a run
 * with a series is the same history as one without. Everything is bounded and deterministic:
 *   SE1 Samples: one every `every_events` events (the event count a multiple of it), at most
 *      PN_SERIES_CAP. When full, every second sample is dropped (those left are the multiples
 *      of twice the stride) and the stride doubles: any run, of any length, keeps between
 *      PN_SERIES_CAP / 2 and PN_SERIES_CAP samples, the last one taken at the run's end
 *      (pn_series_finish) with the run's totals.
 *   SE2 Checkpoints: every `ckpt_every`-th completed one (numbers 1, 1 + ckpt_every, ...), at
 *      most PN_SERIES_CKPT_CAP, halved and `ckpt_every` doubled the same way when full.
 *   SE3 Generations (umbra, generations > 1): up to PN_SERIES_PAGES heap pages, chosen at a
 *      checkpoint's end as the lowest-numbered pages not yet chosen whose active or baseline
 *      slot is not 0 (pages that shifted); a page chosen at checkpoint k reads
 *      PN_SERIES_UNKNOWN before k.
 *   SE4 Commit latency: each sample holds the sum of the latencies of the commits acknowledged
 *      up to it and their count (the engine's acknowledged-commit log, pn_engine_acks, read
 *      from where the last sample stopped: each latency is added once), so the average over
 *      an interval is the difference of the sums over that of the counts, as pgbench
 *      --progress's "lat" is; at the run's end the sum is taken over the whole log again.
 */
#ifndef PN_SERIES_H
#define PN_SERIES_H

#include <stdbool.h>
#include <stdint.h>

struct pn_engine;

#define PN_SERIES_CAP 256
#define PN_SERIES_CKPT_CAP 128
#define PN_SERIES_PAGES 16
#define PN_SERIES_UNKNOWN 255
#define PN_SERIES_PENDING 8 /* checkpoint begin times remembered (>= PN_MAX_CKPT_RUNS) */

/* The columns of a sample: cumulative counters of struct pn_metrics, the time, and the
 * commit latencies summed (SE4). */
enum pn_series_col {
	PN_SC_TIME_NS,
	PN_SC_EVENTS,
	PN_SC_TRANSACTIONS,
	PN_SC_COMMITS,
	PN_SC_WAL_BYTES,
	PN_SC_FPI_COUNT,
	PN_SC_FPI_BYTES,
	PN_SC_DATA_BYTES,
	PN_SC_DATA_WRITES,
	PN_SC_FSYNCS,
	PN_SC_SHIFTS,
	PN_SC_CHECKPOINTS,
	PN_SC_COMMIT_LATENCY_NS, /* the latencies of the commits acknowledged so far, summed */
	PN_SC_COMMITS_TIMED,     /* how many commits that sum holds (SE4) */
	PN_SC_COUNT
};
/* Their JSON names ("time_ns", "events", ..., "checkpoints"). */
extern const char *const pn_series_col_names[PN_SC_COUNT];

struct pn_series_ckpt {
	uint64_t number; /* 1 = the run's first completed checkpoint */
	uint64_t begin_ns, end_ns;
	uint64_t wal_bytes, fpi_count, commits, shifts;             /* as of its end */
	uint8_t active[PN_SERIES_PAGES], baseline[PN_SERIES_PAGES]; /* SE3 */
};

struct pn_series {
	uint32_t n;            /* samples held */
	uint64_t every_events; /* SE1 stride */
	uint64_t next_at;      /* the first multiple of the stride due after events_seen */
	uint64_t events_seen;  /* the event count of the last pn_series_observe() */
	uint64_t v[PN_SERIES_CAP][PN_SC_COUNT];
	uint32_t nckpt;
	uint64_t ckpt_every; /* SE2 */
	struct pn_series_ckpt ckpt[PN_SERIES_CKPT_CAP];
	uint64_t seen_begun, seen_done, ckpt_done; /* what the engine showed at the last look */
	uint64_t begin_ns[PN_SERIES_PENDING];      /* by checkpoint sequence number */
	uint32_t generations;                      /* of the run (1 unless umbra) */
	uint32_t npages;                           /* SE3 pages chosen */
	uint32_t pages[PN_SERIES_PAGES];
	uint64_t lat_seen;   /* SE4: the acknowledged commits' latencies summed so far */
	uint64_t lat_sum_ns; /* their sum */
};

void pn_series_init(struct pn_series *s, const struct pn_engine *e);
/* After each event (events rising from call to call): a sample when the event count is a
 * multiple of the stride (SE1), and the checkpoints that began or ended since the last call
 * (SE2, SE3). A call between samples compares events with next_at (no division). */
void pn_series_observe(struct pn_series *s, const struct pn_engine *e, uint64_t now_ns,
		       uint64_t events);
/* Whether pn_series_observe() after event `events` would change anything, given the engine's
 * checkpoint counts (pn_engine_ckpt_seqs): a sample is due or a checkpoint began or ended.
 * The world's per-event test: a call it skips is one that would have changed nothing. */
static inline bool pn_series_due(const struct pn_series *s, uint64_t events, uint64_t begun,
				 uint64_t done)
{
	return events >= s->next_at || begun != s->seen_begun || done != s->seen_done;
}
/* At the run's end (after pn_engine_finish_metrics): the last sample, with the totals. */
void pn_series_finish(struct pn_series *s, const struct pn_engine *e, uint64_t now_ns,
		      uint64_t events);

#endif

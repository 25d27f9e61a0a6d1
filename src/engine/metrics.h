/*
 * metrics.h: what a run counts (engine layer; struct pn_metrics is the engine's, e->m: every
 * module adds to it, engine.c's pn_engine_finish_metrics() completes it, cli/ and sim/ print
 * it). Record counters are per kind (page.h's enum pn_rec).
 */
#ifndef PN_METRICS_H
#define PN_METRICS_H

#include "redo.h"

#include <string.h>

#define PN_TXN_TYPES 5
struct pn_metrics {
	uint64_t transactions, commits, aborts;
	uint64_t wal_bytes, wal_records, fpi_count, fpi_bytes;
	uint64_t rec_count[PN_REC_COUNT], rec_bytes[PN_REC_COUNT], rec_fpi_bytes[PN_REC_COUNT];
	uint64_t shifts;
	uint64_t data_bytes_written, data_writes, data_bytes_read, data_reads;
	uint64_t dw_bytes_written, wal_write_bytes;
	uint64_t fsyncs, wal_flushes;
	uint64_t logical_bytes_changed;
	uint64_t checkpoints, ckpt_time, ckpt_xact, ckpt_wal, ckpt_request;
	uint64_t slots_used;
	uint64_t read_runs;
	uint64_t recovery_records, recovery_pages_read;
	uint64_t elapsed_ns;
	uint64_t commit_latency_ns_p50, commit_latency_ns_p99, commit_latency_ns_max;
	uint64_t evictions, bgwriter_writes, ckpt_writes, stalls_wal;
	/* pushdown (pushdown.c): the page server's work */
	uint64_t ps_reads;                                    /* GetPage@LSN requests served */
	uint64_t ps_deltas_replayed;                          /* deltas applied to serve them */
	uint64_t ps_replay_p50, ps_replay_p99, ps_replay_max; /* deltas per read */
	uint64_t ps_delta_records, ps_delta_bytes;            /* (record, page) deltas ingested */
	uint64_t ps_images, ps_image_bytes, ps_meta_bytes, ps_fsyncs, ps_rounds;
	/* per transaction type of the workload (tpcc: NewOrder, Payment, OrderStatus,
	 * Delivery, StockLevel; pgbench: TPC-B): commits, and WAL bytes of their records */
	uint64_t txn_type_count[PN_TXN_TYPES], txn_type_wal[PN_TXN_TYPES];
};

/* The WAL counters start again from zero: what the run reports of its WAL (bytes, records,
 * images, the record table) is what it inserts from here on (an import trace's F line: the
 * records before --from are replayed, not counted). */
static inline void pn_metrics_wal_baseline(struct pn_metrics *m)
{
	m->wal_bytes = m->wal_records = m->fpi_count = m->fpi_bytes = 0;
	memset(m->rec_count, 0, sizeof m->rec_count);
	memset(m->rec_bytes, 0, sizeof m->rec_bytes);
	memset(m->rec_fpi_bytes, 0, sizeof m->rec_fpi_bytes);
}

#endif

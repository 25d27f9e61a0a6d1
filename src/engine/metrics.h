/*
 * metrics.h: what a run counts (engine layer; struct pn_metrics is the engine's, e->m: every
 * module adds to it, engine.c's pn_engine_finish_metrics() completes it, cli/ and sim/ print
 * it). Record counters are per kind (page.h's enum pn_rec). The protocol row's own figures are
 * values only (struct pn_row_figures): their keys, labels and formats are the row's
 * declaration's (protocols.h struct pn_figure_decl), so the engine names no row's figure.
 */
#ifndef PN_METRICS_H
#define PN_METRICS_H

#include "pn.h"
#include "redo.h"

#include <string.h>

#define PN_TXN_TYPES 5

/* A labelled-figures sink: the protocol row's metrics.finish hook sets figure i (the index
 * of its declaration's figure list) to an integer u[i] or a real v[i] (as that declaration
 * says); the CLI prints them, in text and JSON, without knowing the row. valid[i] false:
 * no value (a zero denominator), "-" in text and null in JSON. */
#define PN_ROW_FIGURES_MAX 16u
struct pn_row_figures {
	uint64_t u[PN_ROW_FIGURES_MAX];
	double v[PN_ROW_FIGURES_MAX];
	bool valid[PN_ROW_FIGURES_MAX];
};

/* Sets figure i, an integer or a real. */
static inline void pn_figure_u64(struct pn_row_figures *f, uint32_t i, uint64_t u)
{
	PN_ASSERT(i < PN_ROW_FIGURES_MAX);
	f->u[i] = u;
	f->valid[i] = true;
}
static inline void pn_figure_real(struct pn_row_figures *f, uint32_t i, double v, bool valid)
{
	PN_ASSERT(i < PN_ROW_FIGURES_MAX);
	f->v[i] = v;
	f->valid[i] = valid;
}
struct pn_metrics {
	uint64_t transactions, commits, aborts;
	uint64_t wal_bytes, wal_records, fpi_count, fpi_bytes;
	uint64_t rec_count[PN_REC_COUNT], rec_bytes[PN_REC_COUNT], rec_fpi_bytes[PN_REC_COUNT];
	uint64_t shifts;
	uint64_t data_bytes_written, data_writes, data_bytes_read, data_reads;
	uint64_t wal_write_bytes;
	uint64_t fsyncs, wal_flushes;
	uint64_t logical_bytes_changed;
	uint64_t checkpoints, ckpt_time, ckpt_xact, ckpt_wal, ckpt_request;
	uint64_t slots_used;
	uint64_t read_runs;
	uint64_t recovery_records, recovery_pages_read;
	uint64_t elapsed_ns;
	uint64_t commit_latency_ns_p50, commit_latency_ns_p99, commit_latency_ns_max;
	uint64_t evictions, bgwriter_writes, ckpt_writes, stalls_wal;
	struct pn_row_figures row; /* the protocol row's own (its metrics.finish sets them) */
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

/*
 * pushdown.h: the pushdown mode's page server (protocol layer, owned by pushdown.c, which keeps
 * PD1-PD4; its storage is pushdown_store.c's, documented byte by byte in pushdown_store.h;
 * docs/protocol.md section 7): WAL ingestion,
 * per-page delta chains, image materialisation, GetPage@LSN, its crash-safe storage and
 * recovery. Its state is opaque (pc->state, struct pn_pageserver). The engine calls it
 * through its row, pn_protocol_pushdown; these are the row's hooks and what tests read.
 */
#ifndef PN_PUSHDOWN_H
#define PN_PUSHDOWN_H

#include "rows.h"

bool pn_ps_init(struct pn_proto_ctx *pc);
void pn_ps_free(struct pn_proto_ctx *pc);
void pn_ps_start(struct pn_proto_ctx *pc);
void pn_ps_step(struct pn_proto_ctx *pc);
/* The compute drops a dirty buffer instead of writing it (its last-written LSN is kept). */
void pn_ps_drop(struct pn_proto_ctx *pc, uint32_t frame);
/* A buffer miss: true when the page server can serve `page` now; else `proc` is woken
 * later (after a WAL flush, or when the page server has ingested it). */
bool pn_ps_page_ready(struct pn_proto_ctx *pc, uint32_t page, uint32_t proc);
/* GetPage@LSN into `frame` (marked reading); `proc` is woken when it is there. */
void pn_ps_request(struct pn_proto_ctx *pc, uint32_t frame, uint32_t page, uint32_t proc);
/* Recovery: load the durable metadata (verifying the images it names); the LSN replay
 * must start from to re-ingest every delta the images lack (<= redo). */
bool pn_ps_recover(struct pn_proto_ctx *pc, pn_lsn redo, pn_lsn *replay_from);
/* One WAL record, as ingested at run time or re-ingested by recovery. */
void pn_ps_ingest_record(struct pn_proto_ctx *pc, const struct pn_wal_record *r, pn_lsn start,
			 pn_lsn end);
void pn_ps_recovery_end(struct pn_proto_ctx *pc, pn_lsn end, pn_lsn last_start);
/* Page `page` as of `lsn` (image + deltas with end <= lsn) into out; returns the number
 * of deltas replayed. */
uint32_t pn_ps_reconstruct(struct pn_proto_ctx *pc, uint32_t page, pn_lsn lsn, uint8_t *out);
/* Nothing to ingest, serve or write (always true outside pushdown). */
bool pn_ps_idle(const struct pn_proto_ctx *pc);
/* After every event: wakes the page server if it sleeps while not idle. */
void pn_ps_rearm(struct pn_proto_ctx *pc);
void pn_ps_check(struct pn_proto_ctx *pc);
/* End LSN of the last record the page server ingested. */
pn_lsn pn_ps_ingested(const struct pn_proto_ctx *pc);
/* The oldest WAL LSN the page server still needs (UINT64_MAX when it needs none). */
pn_lsn pn_ps_horizon(const struct pn_proto_ctx *pc);
/* The row's figures (metrics.h struct pn_row_figures), by index: its declaration's list
 * (pn_decl_pushdown) in this order. */
enum pn_ps_figure {
	PN_PS_READS,
	PN_PS_DELTAS_REPLAYED,
	PN_PS_REPLAY_MEAN,
	PN_PS_REPLAY_P50,
	PN_PS_REPLAY_P99,
	PN_PS_REPLAY_MAX,
	PN_PS_DELTA_RECORDS,
	PN_PS_DELTA_BYTES,
	PN_PS_IMAGES,
	PN_PS_IMAGE_BYTES,
	PN_PS_META_BYTES,
	PN_PS_BYTES_WRITTEN,
	PN_PS_BYTES_WITH_DELTAS,
	PN_PS_FSYNCS,
	PN_PS_ROUNDS,
	PN_PS_FIGURES
};
void pn_ps_finish_metrics(struct pn_proto_ctx *pc);

#endif

/*
 * pushdown_store.h: the pushdown page server's storage and state (protocol layer, owned by
 * pushdown_store.c, which writes and reads the format below; pushdown.c runs the page server
 * on this state: ingestion, delta chains, GetPage@LSN, image rounds; docs/protocol.md
 * section 7).
 *
 * Storage (PN_FILE_PAGESERVER), little-endian. A = snapshot area size, L = log slot size,
 * K = log slots = A / L within [4, 64] (a snapshot costs about what K log records do):
 *   [0, A) snapshot area 0 | [A, 2A) snapshot area 1 | [2A, 2A + K L) the metadata log |
 *   then image slots: 2A + K L + (page * 2 + slot) * page_size (slot 0 or 1).
 *   A snapshot (A = 32 + 16 * pages rounded up to a sector): the whole table
 *     0 magic u32 'PNPS' | 4 version u32 = 1 | 8 seq u64 | 16 horizon u64 | 24 npages u32 |
 *     28 crc32c u32 over [32, 32 + 16 * npages) then over [0, 28) |
 *     32 + 16 * p: image LSN u64 | crc32c u32 of the image | slot u8 | 3 zero bytes.
 *   A log record (L = 512 rounded up to a sector): one round's images
 *     0 magic u32 'PNPL' | 4 count u32 (<= 24) | 8 seq u64 | 16 horizon u64 | 24 zero u32 |
 *     28 crc32c u32 over [32, 32 + 20 * count) then over [0, 28) |
 *     32 + 20 * i: page u32 | crc32c u32 of the image | image LSN u64 | slot u8 | 3 zeros.
 *   Round (metadata version) s writes snapshot area (s / K) % 2 when s % K == 0, else log
 *   slot s % K. Recovery takes the valid snapshot with the highest seq S, then applies the
 *   log records S+1, S+2, ... while each is valid and carries the next seq. Round s + 1
 *   starts only after round s's metadata is durable, so a torn or lost write only ever
 *   ends the log (and the snapshot being written leaves the other one and its log intact).
 *
 * Rules kept here:
 *   PS1 A snapshot or a log record counts only when its magic, version, CRC and every entry
 *       hold (decode_meta, decode_log); a torn or stale one is as if never written.
 *   PS2 Recovery reads the valid snapshot with the highest seq, then the log records after it
 *       while each is valid and carries the next seq (pn_ps_load_meta, pn_ps_replay_log).
 */
#ifndef PN_PUSHDOWN_STORE_H
#define PN_PUSHDOWN_STORE_H

#include "rows.h"

#define PS_MAGIC 0x53504E50u /* "PNPS" */
#define PS_HEADER 32u
#define PS_ENTRY 16u
#define PS_TICK_NS 1000000ull   /* the page server looks for WAL and images every 1 ms */
#define PS_GETPAGE_NS 100000ull /* a GetPage@LSN round trip */
#define PS_POLL_NS 20000u
#define PS_BATCH 24u             /* images per round: one log record (and a bound on I/Os) */
#define PS_LOG_SLOTS_MAX 64u     /* log records between snapshots, at most */
#define PS_LOG_MAGIC 0x4C504E50u /* "PNPL" */
#define PS_LOG_ENTRY 20u
#define DELTA_HEADER 20u    /* u32 record length | u64 start LSN | u64 end LSN */
#define HIST_LEN 1024u      /* deltas-per-read histogram; the last bucket is ">=" */
#define PS_SCAN_PAGES 4096u /* up to this many pages, every round recomputes the horizon */

enum ps_round { PS_IDLE, PS_WRITING, PS_FSYNC_IMAGES, PS_META_WRITE, PS_META_FSYNC };

struct ps_page {
	pn_lsn img_lsn; /* the image reads start from (its write completed) */
	pn_lsn dur_lsn; /* the image the durable metadata names */
	pn_lsn new_lsn; /* the image the current round writes */
	pn_lsn hold;    /* start LSN of the oldest delta after dur_lsn; 0: none */
	uint32_t img_crc, dur_crc, new_crc;
	uint8_t img_slot, dur_slot;
	bool queued, in_round;
	pn_lsn last_end;  /* end LSN of the newest delta on the chain */
	uint32_t ndeltas; /* deltas on the chain (all after img_lsn) */
	uint8_t *chain;   /* deltas: DELTA_HEADER + the record's bytes, in LSN order */
	uint32_t len, cap;
};

struct ps_request {
	uint32_t frame, page, proc;
	pn_lsn lsn;
};

/* The page server's work, counted for its figures (pushdown.c pn_ps_finish_metrics; metrics,
 * not in the fingerprint): GetPage@LSN requests served, the deltas applied to serve them
 * (most in one read), (record, page) deltas ingested and their bytes, images written and
 * their bytes, metadata bytes, fsyncs, rounds. */
struct ps_counters {
	uint64_t reads, deltas_replayed, replay_max;
	uint64_t delta_records, delta_bytes;
	uint64_t images, image_bytes, meta_bytes, fsyncs, rounds;
};

struct pn_pageserver {
	struct ps_page *pages;
	struct pn_wal_reader reader; /* ingestion's, on the WAL file */
	pn_lsn next, prev;           /* where ingestion continues */
	pn_lsn ingested;             /* end LSN of the last record ingested */
	pn_lsn horizon;              /* of the durable metadata (PD2) */
	pn_lsn horizon_next;         /* of the metadata the round writes */
	uint64_t seq;                /* of the durable metadata */
	enum ps_round round;
	bool running; /* started (a recovered engine's page server only recovers) */
	bool io_pending;
	uint32_t *queue, queue_len; /* pages at the threshold, waiting for a round */
	uint32_t batch[PS_BATCH], batch_len, writes;
	struct ps_request *req;
	uint32_t nreq;
	pn_lsn *last_written; /* per page: the compute's last-written LSN */
	uint32_t meta_len, log_len;
	uint8_t *meta;                  /* the snapshot or log record a round writes */
	uint8_t *enc;                   /* a record, encoded (ingest) */
	uint8_t *images;                /* decode scratch: PN_WAL_MAX_BLOCKS pages */
	size_t enc_bytes, images_bytes; /* their sizes (pn_big_free) */
	uint64_t hist[HIST_LEN];
	struct ps_counters count;
	uint32_t check_next; /* pn_ps_check's rotation */
};

/* The row's state (pc->state; the engine knows it as a void pointer). */
static inline struct pn_pageserver *pn_ps_of(const struct pn_proto_ctx *pc) { return pc->state; }

/* Offset in PN_FILE_PAGESERVER of image slot `slot` (0 or 1) of page `page`. */
uint64_t pn_ps_image_offset(const struct pn_proto_ctx *pc, uint32_t page, uint32_t slot);
/* Formatting: every page's initial image in slot 0 and metadata area 0 naming them. */
void pn_ps_format(struct pn_proto_ctx *pc, pn_format_write_fn write, void *ctx);
/* The snapshot area's size A, a log slot's size L, the log slots K, log record seq's offset. */
uint32_t pn_ps_meta_len(const struct pn_proto_ctx *pc);
uint32_t pn_ps_log_len(const struct pn_proto_ctx *pc);
uint32_t pn_ps_log_slots(const struct pn_proto_ctx *pc);
uint64_t pn_ps_log_offset(const struct pn_proto_ctx *pc, uint64_t seq);
/* Into ps->meta: the snapshot of version seq (with_new: the round's images as if durable),
 * or the log record of round seq (its batch). */
void pn_ps_encode_meta(const struct pn_proto_ctx *pc, uint64_t seq, pn_lsn horizon, bool with_new);
void pn_ps_encode_log(const struct pn_proto_ctx *pc, uint64_t seq, pn_lsn horizon);
/* Recovery (PS2): the newest valid snapshot (false: none, a recovery failure), then the log
 * records after it. */
bool pn_ps_load_meta(struct pn_proto_ctx *pc);
void pn_ps_replay_log(struct pn_proto_ctx *pc);

#endif

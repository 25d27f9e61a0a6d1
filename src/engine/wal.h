/*
 * wal.h: WAL insertion and flushing (engine layer, owned by wal.c; its rules W1-W7 are in
 * wal.c's header, the record bytes in walfmt.h): insert (LSN = byte position), group flush,
 * the segment ring. struct pn_wal is e->wal in struct pn_engine; only wal.c writes its
 * fields, everyone else reads them through the functions below.
 */
#ifndef PN_WAL_H
#define PN_WAL_H

#include "metrics.h"
#include "redo.h"
#include "scenario.h"
#include "services.h"
#include "walfmt.h"

/*
 * One flush at a time (W3), its state changed only in pn_wal_set_state():
 *
 *   IDLE --pn_wal_start_flush()--> WRITING --wal_write_done(), the last write--> FSYNC
 *     ^                                                                            |
 *     +------------------------------ wal_fsync_done() -----------------------------+
 */
enum pn_wal_flush_state {
	PN_WAL_IDLE,    /* no flush in progress */
	PN_WAL_WRITING, /* the pages up to flush_target are being written (flush_ios in flight) */
	PN_WAL_FSYNC,   /* they are written; the WAL file's fsync is in flight */
	PN_WAL_FLUSH_STATES
};

/* A process waiting for a flush (commit, WAL before data). */
struct pn_wal_waiter {
	bool waiting;
	pn_lsn lsn;
};

struct pn_wal {
	/* handles and constants, set at init */
	struct pn_services *svc;
	struct pn_metrics *m;
	uint32_t page_size;
	uint64_t sysid;
	uint32_t ckpt_segments;          /* CheckPointSegments, 0: no WAL-volume trigger */
	void (*segments_due)(void *ctx); /* XLogCheckpointNeeded: ask for a checkpoint */
	void *segments_ctx;
	pn_lsn (*horizon)(void *ctx); /* another reader's oldest needed LSN (page server) */
	void *horizon_ctx;
	struct pn_wal_waiter *waiters; /* one per process */
	uint32_t nwaiters;

	uint32_t seg_size;
	uint32_t nsegs; /* segment ring on the device */
	uint64_t insert_bytepos;
	pn_lsn insert_start, insert_end; /* W1: bytepos_to_recptr / _endrecptr of insert_bytepos */
	pn_lsn prev_start;               /* start LSN of the last record */
	pn_lsn redo;                     /* RedoRecPtr */
	pn_lsn written, flushed;         /* end LSNs */
	uint8_t *pages;                  /* ring of WAL pages in memory */
	uint64_t *tags;                  /* the page address each ring slot holds */
	uint32_t npages;
	pn_lsn ring_base; /* first page address still held (not yet written) */
	enum pn_wal_flush_state flush_state;
	pn_lsn flush_target;
	uint32_t flush_ios;   /* writes of the current flush still in flight */
	pn_lsn keep_from;     /* oldest LSN recovery may need */
	uint64_t seg_removed; /* W6: segments below this are removed (or predate us) */
	uint64_t seg_entered; /* W6: the newest segment the insert position entered */
	uint8_t *rec_buf;     /* encode scratch */
	uint32_t rec_cap;
	uint32_t last_len; /* xl_tot_len of the last record inserted */
	pn_lsn slot_page;  /* the page ring_slot() last placed, in slot slot_last */
	uint32_t slot_last;
	bool unread; /* W7: no one reads the WAL's bytes, so none are built */
};

/* nprocs: processes that may wait for a flush. */
bool pn_wal_init(struct pn_wal *w, const struct pn_scenario *sc, struct pn_services *svc,
		 struct pn_metrics *m, uint64_t sysid, uint32_t nprocs);
void pn_wal_free(struct pn_wal *w);
/* Callbacks the assembly installs: the WAL-volume checkpoint trigger, and a horizon below
 * which WAL is kept besides the checkpoint's redo pointer. */
void pn_wal_on_segments(struct pn_wal *w, void (*fn)(void *ctx), void *ctx);
void pn_wal_set_horizon(struct pn_wal *w, pn_lsn (*fn)(void *ctx), void *ctx);
/* Field relationships, asserted (recovering: replay holds flushed at its sentinel). */
void pn_wal_check(const struct pn_wal *w, bool recovering);

/* Whether a record of `len` bytes fits now (W4, W5). PN_WAL_ROOM_RING: the in-memory ring
 * holds pages not yet written (PostgreSQL's AdvanceXLInsertBuffer writes them out and goes
 * on: flush, then insert); PN_WAL_ROOM_SEGMENTS: the device's segment ring holds WAL that
 * recovery needs (only a checkpoint frees it). */
enum pn_wal_room { PN_WAL_ROOM_OK, PN_WAL_ROOM_RING, PN_WAL_ROOM_SEGMENTS };
enum pn_wal_room pn_wal_room(const struct pn_wal *w, uint32_t len);
/* Encodes r, assigns its place, copies it into the WAL pages; returns the end LSN. */
pn_lsn pn_wal_insert(struct pn_wal *w, struct pn_wal_record *r, enum pn_rec kind, pn_lsn *start);
/* Asks for a flush up to lsn; true if already flushed, else proc is woken when it is. */
bool pn_wal_flush_request(struct pn_wal *w, pn_lsn lsn, uint32_t proc);
void pn_wal_start_flush(struct pn_wal *w, pn_lsn upto);
/* proc's pending wait, if it has one, ends at lsn instead: a backend that commits while a
 * flush request of its own (an eviction's) is still pending is woken for its commit record,
 * as when the waiter's LSN was the process's. */
void pn_wal_rewait(struct pn_wal *w, uint32_t proc, pn_lsn lsn);
void pn_wal_set_state(struct pn_wal *w, enum pn_wal_flush_state to);
/* After recovery: continue at the end of valid WAL. */
void pn_wal_start_at(struct pn_wal *w, pn_lsn end, pn_lsn prev_start);
/* Everything up to end is durable (format wrote it synchronously; replay's sentinel). */
void pn_wal_set_durable(struct pn_wal *w, pn_lsn end);
uint64_t pn_wal_file_offset(const struct pn_wal *w, pn_lsn page_addr);
/* The in-memory page holding page_addr (it must be there: format writes it out); NULL when
 * no bytes are built (W7). */
const uint8_t *pn_wal_ring_page(const struct pn_wal *w, pn_lsn page_addr);
/* A checkpoint completed with this redo pointer: keep WAL from it (or the horizon), W6. */
void pn_wal_checkpoint_done(struct pn_wal *w, pn_lsn redo);
void pn_wal_set_redo(struct pn_wal *w, pn_lsn redo);
void pn_wal_set_keep_from(struct pn_wal *w, pn_lsn lsn);

/* Readers (inline: the per-event paths call them). */
static inline pn_lsn pn_wal_redo(const struct pn_wal *w) { return w->redo; }
static inline pn_lsn pn_wal_flushed(const struct pn_wal *w) { return w->flushed; }
static inline pn_lsn pn_wal_written(const struct pn_wal *w) { return w->written; }
static inline pn_lsn pn_wal_keep_from(const struct pn_wal *w) { return w->keep_from; }
static inline bool pn_wal_flushing(const struct pn_wal *w) { return w->flush_state != PN_WAL_IDLE; }
static inline uint32_t pn_wal_seg_size(const struct pn_wal *w) { return w->seg_size; }
static inline uint32_t pn_wal_nsegs(const struct pn_wal *w) { return w->nsegs; }
static inline uint32_t pn_wal_rec_cap(const struct pn_wal *w) { return w->rec_cap; }
/* The end LSN of the last record inserted (where the next byte goes). */
static inline pn_lsn pn_wal_insert_lsn(const struct pn_wal *w) { return w->insert_end; }
/* Where the next record will start (the redo pointer a checkpoint beginning now takes). */
static inline pn_lsn pn_wal_insert_start(const struct pn_wal *w) { return w->insert_start; }
/* xl_tot_len of the last record pn_wal_insert() placed. */
static inline uint32_t pn_wal_last_len(const struct pn_wal *w) { return w->last_len; }

#endif

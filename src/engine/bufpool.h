/*
 * bufpool.h: the buffer pool (engine layer, owned by bufpool.c; its rules B1-B6 and the frame
 * state machine are in bufpool.c's header): buffer frames, clock-sweep eviction, write-out
 * with WAL before data. struct pn_bufpool owns the frames, their bytes, the page -> frame
 * map, the clock hand and each process's held victim; it works with the handles it is
 * given at init (struct pn_buf_handles), never with the engine. struct pn_frame, a frame's
 * fields, is frame.h's (the protocol table names it too).
 */
#ifndef PN_BUFPOOL_H
#define PN_BUFPOOL_H

#include "env.h"
#include "frame.h"
#include "services.h"
#include "walfmt.h"

struct pn_metrics;
struct pn_proto_ctx;
struct pn_protocol_ops;
struct pn_scenario;
struct pn_store;
struct pn_wal;

/* What the pool works with: the modules it calls (services for I/O, wakes and violations;
 * the WAL for B1; the store for slots), the protocol's row and its context (the hooks of
 * protocol.h's buffer pool section), and what it reads of others: the checkpoint sequence
 * numbers (an I/O's ckpt_seq; R3's report) and whether recovery runs (a metric). */
struct pn_buf_handles {
	const struct pn_scenario *sc;
	struct pn_services *svc;
	struct pn_wal *wal;
	struct pn_store *store;
	struct pn_metrics *m;
	const struct pn_protocol_ops *proto;
	struct pn_proto_ctx *pctx;
	const uint64_t *ckpt_seq_begun, *ckpt_seq_done;
	const bool *recovering;
	uint32_t page_size, pages, nprocs;
};

/* B7: the victim a process evicting a page holds while the WAL flush is waited for. */
struct pn_buf_victim {
	bool held;
	uint32_t frame;
};

/* Frames a pool remembers as changed since pn_engine_check() last took them (pin, unpin, a
 * flag edge, a read or write done): it checks those after the event that changed them, and
 * the rest in a slower rotation. A frame beyond the bound is left to the rotation. */
#define PN_BUF_TOUCHED 8u

struct pn_bufpool {
	struct pn_buf_handles h; /* set at init */
	struct pn_frame *frames;
	uint8_t *frame_data;
	uint32_t nframes;
	uint32_t clock_hand;
	uint32_t *page_frame;             /* page -> frame or PN_NO_FRAME */
	uint32_t data_writes_inflight;    /* data writes issued and not completed (rows' too) */
	struct pn_buf_victim *victims;    /* per process (pn_buf_pin) */
	uint32_t touched[PN_BUF_TOUCHED]; /* frames changed since pn_buf_take_touched() */
	uint32_t ntouched;
	bool seen; /* B10: the event running now is one whose state an earlier run checked */
};

/* false when out of memory (pn_buf_free frees what was allocated). */
bool pn_buf_init(struct pn_bufpool *b, const struct pn_buf_handles *h, uint32_t nframes);
void pn_buf_free(struct pn_bufpool *b);
static inline struct pn_frame *pn_buf_frame(const struct pn_bufpool *b, uint32_t frame)
{
	return &b->frames[frame];
}
/* Remembers frame as changed (PN_BUF_TOUCHED). */
static inline void pn_buf_touch(struct pn_bufpool *b, uint32_t frame)
{
	if (b->ntouched < PN_BUF_TOUCHED)
		b->touched[b->ntouched++] = frame;
}
/* The frames changed since the last call, *count of them (the array stays valid until the
 * next pool call); forgets them. */
static inline const uint32_t *pn_buf_take_touched(struct pn_bufpool *b, uint32_t *count)
{
	*count = b->ntouched;
	b->ntouched = 0;
	return b->touched;
}
/* The frame holding page, or PN_NO_FRAME. */
static inline uint32_t pn_buf_frame_of(const struct pn_bufpool *b, uint32_t page)
{
	return b->page_frame[page];
}
/* Returns a frame for page, pinned; or PN_NO_FRAME and proc will be woken (I/O or wait). */
/* no_read: the caller overwrites the whole page (redo of an image): zero it, read nothing. */
uint32_t pn_buf_pin(struct pn_bufpool *b, uint32_t page, uint32_t proc, bool no_read);
void pn_buf_unpin(struct pn_bufpool *b, uint32_t frame);
/* DropRelationBuffers for one page (a truncation): its frame, if any, is emptied with its
 * changes discarded and no checkpoint run owes it a write; false (nothing done) while the
 * frame is not idle (pinned, locked, held or under I/O). */
bool pn_buf_drop(struct pn_bufpool *b, uint32_t page);
enum pn_write_result {
	PN_WRITE_STARTED, /* I/O issued; proc (if any) is woken as each completes */
	PN_WRITE_NONE,    /* nothing to write (clean, or an unlogged hint dropped: B4) */
	PN_WRITE_WAL,     /* waiting for a WAL flush (B1), the frame held for proc (B7); proc
			   * is woken when it is done and must call again to write it */
	PN_WRITE_BUSY,    /* the frame or the doublewrite area is busy: try again later */
};
/* Starts writing a frame out for `why` (run: the checkpoint run for PN_WHY_CKPT); then (may
 * be NULL): called as each write completes, after the pool's own bookkeeping. */
enum pn_write_result pn_buf_write(struct pn_bufpool *b, uint32_t frame, enum pn_io_why why,
				  uint32_t proc, int run, const struct pn_io_then *then);
bool pn_buf_idle(const struct pn_bufpool *b, uint32_t frame);
/* Issues the data write of `image` (the LSN of its bytes: lsn; the frame's may have moved
 * on since they were copied) to `slot` of the frame's page: R1 checked, B2's binding. For
 * pn_buf_write and the rows that write a page themselves (doublewrite's in-place write). */
struct pn_io *pn_buf_issue_write(struct pn_bufpool *b, uint32_t frame, uint32_t slot,
				 enum pn_io_why why, uint32_t proc, const uint8_t *image,
				 pn_lsn lsn, const struct pn_io_then *then);
uint8_t *pn_frame_page(struct pn_bufpool *b, uint32_t frame);
/* `page` (page_size bytes) now holds a page as the lazy builder makes it (sim/chunks.h CK3:
 * the formatted page, checksum set, a pure function of its number): if it is the frame of a
 * read in flight, its read's verification is skipped (B8). */
void pn_buf_note_built(struct pn_bufpool *b, const uint8_t *page);

/* ---- the frame's flag edges, each asserted (the one way other modules and the rows change
 * a frame's flags; the pool's own reads and writes keep theirs in bufpool.c) ---- */
/* A WAL-logged change of pinned `frame`: dirty, no longer hint-only; redirtied when a write
 * is in flight. Then its LSN: the end of the change's record (0: a headerless SLRU page). */
void pn_buf_set_dirty(struct pn_bufpool *b, uint32_t frame);
void pn_buf_set_last_lsn(struct pn_bufpool *b, uint32_t frame, pn_lsn lsn);
/* A change no WAL covers (hint bits): dirty, and hint-only if it was clean. */
void pn_buf_set_hint_dirty(struct pn_bufpool *b, uint32_t frame);
/* Redo changed or moved the page: dirty (hint-only as it was); redirtied as above. */
void pn_buf_set_redo_dirty(struct pn_bufpool *b, uint32_t frame);
/* The page server took a dirty frame instead of its write (B6): clean. */
void pn_buf_set_clean(struct pn_bufpool *b, uint32_t frame);
/* A read the row served itself (GetPage@LSN) filled the frame; lsn: its last change. */
void pn_buf_set_read_done(struct pn_bufpool *b, uint32_t frame, pn_lsn lsn);
/* The exclusive content lock (a backend between DECIDE and the end of its op). */
void pn_buf_lock(struct pn_bufpool *b, uint32_t frame);
void pn_buf_unlock(struct pn_bufpool *b, uint32_t frame);
/* A data write a row issues itself (doublewrite's area write) begins, and ends (before
 * the in-place write, which pn_buf_issue_write counts itself). */
void pn_buf_write_begun(struct pn_bufpool *b, uint32_t frame);
void pn_buf_write_ended(struct pn_bufpool *b, uint32_t frame);

#endif

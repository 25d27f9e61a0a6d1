/*
 * frame.h: one buffer frame (engine layer, owned by bufpool.c: the buffer pool's frames and
 * their state machine are documented there). A header of its own so that the protocol table
 * (protocol.h), whose hooks take a frame, names this type and not the pool. PN_MAX_CKPT_RUNS
 * is here because a frame has a slot per checkpoint run.
 */
#ifndef PN_FRAME_H
#define PN_FRAME_H

#include "walfmt.h"

#define PN_NO_FRAME UINT32_MAX
#define PN_MAX_CKPT_RUNS 2

struct pn_frame {
	uint32_t page; /* PN_NO_FRAME if empty */
	bool valid;    /* holds the page's bytes */
	bool dirty;
	bool dirty_hint_only; /* dirtied only by hint bits, no WAL */
	bool redirtied;       /* changed while a write was in flight */
	bool locked;          /* exclusive content lock (a backend between decide and insert) */
	uint16_t pins;
	uint8_t usage;     /* clock sweep, <= 5 */
	uint8_t io_reads;  /* read in flight */
	uint8_t io_writes; /* writes in flight */
	bool built; /* being read, and its bytes are the builder's whole page (pn_buf_note_built) */
	uint8_t ckpt_needed;                 /* bit r: checkpoint run r must write this frame */
	uint8_t ckpt_slot[PN_MAX_CKPT_RUNS]; /* Umbra: where run r must write it */
	bool held;       /* B7: a writer waits for the WAL flush to held_lsn; no change */
	uint32_t holder; /* that writer's proc (held only) */
	pn_lsn held_lsn; /* last_lsn when the hold was taken (held only) */
	uint64_t ckpt_run_seq[PN_MAX_CKPT_RUNS]; /* the seq of the run that set bit r */
	pn_lsn last_lsn; /* LSN of the last WAL-logged change (SLRU pages have none) */
	uint64_t
		shift_epoch; /* Umbra l4: seq of the checkpoint epoch it last shifted in (0: none) */
	/* 1 + the checkpoint seq begun when a WAL-logged change first reached the frame while its
	 * write was in flight (0: none since the write's image was copied): the write misses
	 * that change, which a run begun after it does not need (bufpool.c B9). */
	uint64_t redirtied_seq;
};

#endif

/*
 * ckpt_run.h: one checkpoint run and the control file's contents (engine layer, owned by
 * ckpt.c, which writes both and documents the control file byte by byte). A header of its own
 * so that the protocol table (protocol.h), whose checkpointer and recovery hooks take a run
 * or the control file, names these types and not the checkpointer.
 */
#ifndef PN_CKPT_RUN_H
#define PN_CKPT_RUN_H

#include "walfmt.h"

#define PN_CONTROL_SIZE_ 512u
/* Selector areas: checkpoint n writes area n % 3, never the one the completed checkpoint
 * names, even with two checkpoints in progress (overlap). */
#define PN_SELECTOR_AREAS 3u
enum pn_ckpt_cause {
	PN_CKPT_TIME,
	PN_CKPT_XACT,
	PN_CKPT_WAL,
	PN_CKPT_REQUEST,
	PN_CKPT_END_OF_RECOVERY
};

/*
 * One checkpoint run (every edge asserted by pn_ckpt_set_state):
 *
 *   IDLE --ckpt_begin()--> WRITING --all written--> WAIT_WRITES --> FSYNC_DATA -->
 *   [PROTO_DURABLE] --> RECORD (insert) --> RECORD_FLUSH (flush WAL) -->
 *   CONTROL_WRITE --> CONTROL_FSYNC --ckpt_end()--> IDLE
 *   WAIT_WRITES --a flagged frame left--> WRITING
 *   WRITING --the row's ckpt_begin--> PROTO_SELECT --the row's steps--> WRITING
 *
 * PROTO_SELECT and PROTO_DURABLE are the protocol's steps (protocol.h ckpt_select_step,
 * ckpt_durable_step), whose own sub-state is run->proto_sub (the row's enum: umbra.h's
 * SELECT, MAP_WRITE, SELECTOR_WRITE, SELECTOR_FSYNC). A script's checkpoint_begin pauses a
 * run in WRITING until checkpoint_end.
 */
enum pn_cstate {
	PN_C_IDLE,
	PN_C_WRITING,
	PN_C_WAIT_WRITES,
	PN_C_FSYNC_DATA,
	PN_C_PROTO_DURABLE,
	PN_C_RECORD,
	PN_C_RECORD_FLUSH,
	PN_C_CONTROL_WRITE,
	PN_C_CONTROL_FSYNC,
	PN_C_PROTO_SELECT,
	PN_C_COUNT
};

struct pn_ckpt_run {
	enum pn_cstate state; /* pn_ckpt_set_state only */
	int proto_sub;        /* the protocol's sub-state in PROTO_SELECT / PROTO_DURABLE */
	enum pn_ckpt_cause cause;
	uint64_t seq; /* checkpoint number, 1.. (0 = the initial state) */
	pn_lsn redo;
	bool sized; /* the store's size at redo (pn_control's), when truncated */
	uint32_t rel_blocks;
	pn_lsn record;          /* start LSN of its checkpoint record */
	uint32_t oldest_active; /* CheckPoint.oldestActiveXid, taken when it begins (ckpt.c) */
	uint64_t start_ns;
	uint64_t start_commits; /* commits when it began (the count interval's start) */
	uint64_t nap_until_ns;  /* CheckpointWriteDelay's nap: no write before then */
	uint32_t scan;          /* next frame to look at */
	uint32_t to_write, written;
	bool paused; /* script checkpoint_begin */
	/* The row's PROTO_SELECT step (rows with a publish step, PN_CAP_PUBLISH; the engine's
	 * capability, the row's use: umbra_map.c): */
	bool pause_select;  /* script checkpoint_epoch: pause before the selection */
	uint64_t select_ns; /* CheckPointGuts' work before the selection ends then */
	bool delay_wait;    /* waiting for a backend in DELAY_CHKPT_START */
	bool immediate;
	bool io_pending;
	uint8_t *snapshot; /* slotted store: each page's slot at the redo pointer (baseline) */
	uint8_t *selbuf;   /* the selector area it writes */
	uint8_t ctlbuf[PN_CONTROL_SIZE_];
	pn_lsn record_end;
};

/* ---- control file (written by ckpt.c; its bytes are documented there) ---- */
struct pn_control {
	uint64_t ckpt_seq;
	pn_lsn checkpoint; /* start of the checkpoint record */
	pn_lsn redo;
	uint32_t selector_area;
	uint32_t state;      /* 1 in production, 2 in recovery */
	bool sized;          /* the relation was truncated: rel_blocks is its size at redo */
	uint32_t rel_blocks; /* (sized only; unsized: every heap page exists) */
};
#define PN_CONTROL_SIZE PN_CONTROL_SIZE_

#endif

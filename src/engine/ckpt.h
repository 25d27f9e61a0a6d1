/*
 * ckpt.h: the checkpointer (engine layer, owned by ckpt.c, which keeps R5 and documents the
 * control file byte by byte): the causes of a checkpoint, one checkpoint run's state
 * machine, the control file's contents and its codec, and struct pn_ckpt, the checkpointer's
 * own state (its runs, the requests, the sequence numbers, the control file it last wrote)
 * with the handles it works with (struct pn_ckpt_handles, set at init).
 */
#ifndef PN_CKPT_H
#define PN_CKPT_H

#include "bufpool.h"
#include "env.h"
#include "procs.h"
#include "walfmt.h"

struct pn_metrics;
struct pn_proto_ctx;
struct pn_protocol_ops;
struct pn_scenario;
struct pn_services;
struct pn_store;
struct pn_wal;

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

/*
 * Where a run is relative to its data fsync: not running; before the fsync completed
 * (PROTO_SELECT, WRITING .. FSYNC_DATA); after it (PROTO_DURABLE .. CONTROL_FSYNC: the data
 * is durable, the control file not yet updated). A state's phase is named case by case in pn_ckpt_run_phase(), never by its order
 * in enum pn_cstate.
 */
enum pn_ckpt_phase { PN_CKPT_PHASE_IDLE, PN_CKPT_PHASE_BEFORE_FSYNC, PN_CKPT_PHASE_AFTER_FSYNC };

struct pn_ckpt_run {
	enum pn_cstate state; /* pn_ckpt_set_state only */
	int proto_sub;        /* the protocol's sub-state in PROTO_SELECT / PROTO_DURABLE */
	enum pn_ckpt_cause cause;
	uint64_t seq; /* checkpoint number, 1.. (0 = the initial state) */
	pn_lsn redo;
	bool sized; /* the store's size at redo (pn_control's), when truncated */
	uint32_t rel_blocks;
	pn_lsn record; /* start LSN of its checkpoint record */
	uint64_t start_ns;
	uint64_t start_commits; /* commits when it began (the count interval's start) */
	uint64_t nap_until_ns;  /* CheckpointWriteDelay's nap: no write before then */
	uint32_t scan;          /* next frame to look at */
	uint32_t to_write, written;
	bool paused;        /* script checkpoint_begin */
	bool pause_select;  /* script checkpoint_epoch (l3/l4): pause before selection */
	uint64_t select_ns; /* l3/l4: CheckPointGuts' work before selection ends then */
	bool delay_wait;    /* l3/l4: waiting for a backend in DELAY_CHKPT_START */
	bool immediate;
	bool io_pending;
	uint8_t *snapshot; /* Umbra: each page's slot at the redo pointer (its baseline) */
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

/* What the checkpointer works with: the modules it calls, the protocol's row and context
 * (protocol.h's checkpointer section), its own process, the processes it wakes when a
 * checkpoint has happened (backends and the startup process wait for one), and what it
 * reads of others: whether the workload is done or recovery runs, the next xid (the
 * checkpoint record's), the system id (the control file's). */
struct pn_ckpt_handles {
	const struct pn_scenario *sc;
	struct pn_services *svc;
	struct pn_wal *wal;
	struct pn_bufpool *buf;
	struct pn_store *store;
	struct pn_metrics *m;
	const struct pn_protocol_ops *proto;
	struct pn_proto_ctx *pctx;
	const struct pn_proc *procs;
	uint32_t nprocs, proc_ckpt;
	const bool *stopping, *recovering;
	const uint32_t *next_xid;
	uint64_t sysid;
	uint32_t heap_pages, generations;
};

struct pn_ckpt {
	struct pn_ckpt_handles h; /* set at init */
	struct pn_ckpt_run runs[PN_MAX_CKPT_RUNS];
	uint64_t seq_begun, seq_done;
	bool requested;
	bool pause_next;        /* script checkpoint_begin: the next run pauses after begin */
	bool pause_select_next; /* script checkpoint_epoch: ... before it selects (l3/l4) */
	enum pn_ckpt_cause request_cause;
	bool request_immediate;
	uint64_t last_ns;
	uint64_t commits_at;
	struct pn_control control; /* what the last completed checkpoint wrote (or recovery read) */
	pn_lsn redo_done;          /* redo pointer of the last completed checkpoint */
};

/* ckpt.c */
/* Zeroes k and sets its handles; the runs' buffers (snapshot, selbuf) are the rows'. */
void pn_ckpt_init(struct pn_ckpt *k, const struct pn_ckpt_handles *h);
/* Flags every dirty frame for run (BufferSync's BM_CHECKPOINT_NEEDED) with its slot. */
void pn_ckpt_select(struct pn_ckpt *k, struct pn_ckpt_run *run);
void pn_ckpt_request(struct pn_ckpt *k, enum pn_ckpt_cause cause, bool immediate);
void pn_ckpt_step(struct pn_ckpt *k);
/* A commit was acknowledged: the count trigger (every_transactions) requests a checkpoint
 * every that many commits, and a run napping ahead of that count interval's schedule that
 * has fallen behind it writes again (a count interval may be shorter than a nap). */
void pn_ckpt_commit(struct pn_ckpt *k);
/* Umbra: the generations that checkpoints in progress hold as page's baseline (a mask). */
uint32_t pn_ckpt_baselines_busy(const struct pn_ckpt *k, uint32_t page);
bool pn_ckpt_active(const struct pn_ckpt *k);
/* Recovery read control file c: the last completed checkpoint is c's. */
void pn_ckpt_recovered(struct pn_ckpt *k, const struct pn_control *c);
/* A checkpoint is requested and not yet begun (it begins once the running one ends). */
bool pn_ckpt_pending(const struct pn_ckpt *k);
enum pn_ckpt_phase pn_ckpt_run_phase(const struct pn_ckpt_run *run);
void pn_ckpt_release_pause(struct pn_ckpt *k);
/* Field relationships of the runs, asserted (pn_engine_check): each state in range, a run
 * in progress numbered between the last completed and the last begun, no two alike, at most
 * one unless checkpoint.overlap. */
void pn_ckpt_check(const struct pn_ckpt *k);
/* The one writer of run->state: asserts the edge (the diagram above); entering a protocol
 * state starts its sub-state at 0. */
void pn_ckpt_set_state(struct pn_ckpt_run *run, enum pn_cstate to);
/* An I/O of run's (the control file, or a protocol step's selector write or fsync); its
 * completion goes to the row's ckpt_io_done in the protocol states. */
void pn_ckpt_run_io(struct pn_ckpt *k, struct pn_ckpt_run *run, enum pn_io_op op, enum pn_file file,
		    uint64_t off, const uint8_t *data, uint32_t len);
void pn_ckpt_encode_control(const struct pn_ckpt *k, const struct pn_control *c, uint8_t *out);
bool pn_ckpt_decode_control(const uint8_t *in, struct pn_control *c);

#endif

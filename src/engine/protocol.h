/*
 * protocol.h: the protocol table (engine layer; its rows are src/protocol/'s, as PostgreSQL's
 * smgrsw[] rows are its storage managers'). The engine calls a protocol only through e->proto, the row the
 * assembly passed to pn_engine_init (src/protocol/protocols.h pn_protocol_of(sc)), and never
 * names one. The hooks are grouped by phase (sub-tables below); a NULL hook is the in-place
 * default, named at each hook. Rows are filled with
 * designated initializers; adding a protocol is one file and one row.
 *
 * Rows (docs/ARCHITECTURE.md section 2a; one line each in src/protocol/list.h, whose order
 * is the rows' identity): fpw, nofpw (protocol/fpw.c), umbra-prototype (protocol/umbra.c),
 * umbra-l3, umbra-l4 (protocol/umbra_map.c), umbra-pool (protocol/umbra_pool.c), umbra-gen2
 * (protocol/umbra_gen2.c), doublewrite (protocol/doublewrite.c), pushdown
 * (protocol/pushdown.c); their shared helpers in protocol/rows.c, the table in
 * protocol/protocols.c.
 * A row keeps its own state behind its context's state (NULL when it has none) and the mutants it owns (docs/ARCHITECTURE.md section 2a).
 */
#ifndef PN_PROTOCOL_H
#define PN_PROTOCOL_H

#include "ckpt_run.h"
#include "env.h"
#include "frame.h"
#include "procs.h"
#include "scenario.h"
#include "store.h"
#include "walfmt.h"

struct pn_io_then;
struct pn_metrics;
struct pn_protocol_ops;

/* Where a fingerprint takes bytes (pn_engine_memory, the row's memory hook): feed adds len
 * bytes to the hash the caller keeps behind ctx (sim/world.c pn_world_fingerprint). */
struct pn_hasher {
	void (*feed)(void *ctx, const void *bytes, size_t len);
	void *ctx;
};

/* How a block is registered, for decide: what the change does to it. */
enum pn_block_use {
	PN_USE_CHANGE,     /* a record that changes the block's contents */
	PN_USE_WILL_INIT,  /* the record rebuilds the block (REGBUF_WILL_INIT) */
	PN_USE_DEDUP,      /* a btree deduplication pass (REGBUF_NO_IMAGE under its mutant) */
	PN_USE_HINT,       /* a backend's logged hint (FPI_FOR_HINT, l4: HINT_DELTA) */
	PN_USE_HINT_BLOCK, /* a workload's hint-only block (pn_client_protect, PN_REG_HINT) */
	PN_USE_SLRU        /* an SLRU page with headers */
};
/* decide's answer, a mask: the block carries its page image, and/or shifts its slot. */
#define PN_PROTECT_IMAGE 1u
#define PN_PROTECT_SHIFT 2u
/* shift_target's answer: no slot to shift to, the block takes its image. */
#define PN_SHIFT_IMAGE UINT32_MAX

/* What a hook is called with: typed handles of the modules below the callers, as an engine
 * module gets at init (services, WAL, store, metrics, the processes a row wakes, whether
 * recovery runs and whether the workload is done, the row's own table), the scenario and
 * the row's own state (init sets it, free frees it; NULL when the row has none). The
 * buffer pool, the checkpointer and the client services name the protocol table, so this
 * header cannot name them back (the module graph has no circle): the context carries them
 * untyped and engine.h's pn_proto_buf, pn_proto_ckpt and pn_proto_client give them typed.
 * A row reaches the engine through these and nothing else (no struct pn_engine). The
 * engine holds one; the hook callers (bufpool, ckpt, recovery, backend, client) keep a
 * pointer to it with the row's table. */
struct pn_proto_ctx {
	const struct pn_scenario *sc;
	struct pn_services *svc;
	struct pn_wal *wal;
	struct pn_store *store;
	struct pn_metrics *m;  /* the run's counters (metrics.h) */
	void *buf_handle;      /* struct pn_bufpool (engine.h pn_proto_buf) */
	void *ckpt_handle;     /* struct pn_ckpt (engine.h pn_proto_ckpt) */
	void *client_handle;   /* struct pn_client_handles (engine.h pn_proto_client) */
	uint32_t nbackends;    /* backends are processes 0 .. nbackends-1 */
	uint32_t proc_ckpt;    /* the checkpointer, which a row's checkpoint step wakes */
	uint32_t proc_startup; /* the startup process, which a recovery step wakes */
	uint32_t proc_row;     /* the row's own process (a row with process hooks: a page server) */
	uint64_t sysid;        /* the system identifier WAL pages carry */
	const bool *recovering; /* recovery is replaying (the R4 check waits for its end) */
	const bool *stopping;   /* the workload is done: background work drains */
	const struct pn_protocol_ops *row; /* the row's own table (its flags) */
	void *state;
};

/*
 * The hooks, grouped by the phase they change (PostgreSQL's f_smgr is one flat table of
 * about 18; ours is a few small ones, so that a row's table shows what it changes): a row
 * fills only the sub-tables of the phases it changes, and a NULL hook is the in-place
 * default named at it.
 */

/* ---- set-up: slots, refusal, the row's state, formatting ---- */
struct pn_proto_setup {
	uint32_t (*generations)(const struct pn_scenario *sc); /* NULL: 1 slot a page */
	bool (*init)(struct pn_proto_ctx *c);                  /* after the modules' init */
	void (*free)(struct pn_proto_ctx *c);
	/* Formatting: the pages (NULL: each at slot 0 of the data file), then after the control
	 * file the row's own files. */
	void (*format_pages)(struct pn_proto_ctx *c, pn_format_write_fn write, void *ctx);
	void (*format)(struct pn_proto_ctx *c, pn_format_write_fn write, void *ctx);
	/* The size of a file other than data, WAL and control (NULL: 0). */
	uint64_t (*file_size)(const struct pn_proto_ctx *c, enum pn_file f);
};

/* ---- write path, backends: how a change protects its block ---- */
struct pn_proto_write {
	/* The image / shift decision (PN_PROTECT_*) for a block with page LSN <= redo or not. */
	unsigned (*decide)(const struct pn_proto_ctx *c, enum pn_block_use use, bool before_redo);
	/* A shifting block's header (rdata: the record has data for it); NULL: as decided. */
	void (*assemble)(struct pn_proto_ctx *c, uint32_t frame, struct pn_wal_block *b,
			 uint8_t *page, bool rdata);
	/* INSERT, a block decided to shift, in the step of its record: the slot it moves to
	 * (NULL: pn_store_shift_target), or PN_SHIFT_IMAGE: a full-page image instead, without
	 * a shift (the pool's fallback). */
	uint32_t (*shift_target)(struct pn_proto_ctx *c, uint32_t page);
	/* The page in `frame` now lives in slot `target` (its record ends at lsn). */
	void (*shifted)(struct pn_proto_ctx *c, uint32_t frame, uint32_t target, pn_lsn lsn);
	/* Storage/TRUNCATE: heap pages from .. to-1 stopped existing and their slots are 0 again
	 * (the store's reset); lsn: the record's end in normal running, 0 in redo. */
	void (*truncated)(struct pn_proto_ctx *c, uint32_t from, uint32_t to, pn_lsn lsn);
	/* Non-NULL: a backend's shift is published in a step of its own after its INSERT
	 * (DELAY_CHKPT_START): defer_shift takes the shift instead of `shifted`; after_insert
	 * says whether backend p goes on to that step (PN_B_PROTO; the row sets p->proto_sub,
	 * its own state; hold: the script's update_hold, which waits there for its release);
	 * proc_step runs it (true: done, the backend's op ends). */
	void (*defer_shift)(struct pn_proto_ctx *c, const struct pn_proc *p, uint32_t target,
			    pn_lsn lsn);
	bool (*after_insert)(struct pn_proto_ctx *c, struct pn_proc *p, bool hold);
	bool (*proc_step)(struct pn_proto_ctx *c, struct pn_proc *p);
	/* INSERT: whether a backend whose redo pointer moved since DECIDE decides again
	 * (XLogInsertRecord's recheck; NULL: it does). The shift_split mutant is read here. */
	bool (*recheck)(const struct pn_proto_ctx *c);
	/* A script's checkpoint step waiting for run seq may go on (NULL: at once). */
	bool (*script_reached)(const struct pn_proto_ctx *c, uint64_t seq, bool resumed);
};

/* ---- write path, buffer pool: how a page is read and written out ---- */
struct pn_proto_buffer {
	/* A miss: true when `page` can be read now; else `proc` is woken later (NULL: true). */
	bool (*page_ready)(struct pn_proto_ctx *c, uint32_t page, uint32_t proc);
	/* Reads `page` into `frame` itself (NULL: a read of its slot in the data file). */
	void (*page_read)(struct pn_proto_ctx *c, uint32_t frame, uint32_t page, uint32_t proc);
	/* The row takes a dirty frame instead of its write (true: nothing is written). */
	bool (*drop_write)(struct pn_proto_ctx *c, uint32_t frame);
	/* Before the image is made: false when the write must wait (PN_WRITE_BUSY). */
	bool (*write_reserve)(struct pn_proto_ctx *c, uint32_t frame, enum pn_io_why why);
	/* Issues the write of img itself (true), or leaves it to the buffer pool (false). */
	bool (*write_image)(struct pn_proto_ctx *c, uint32_t frame, enum pn_io_why why,
			    uint32_t proc, const uint8_t *img, const struct pn_io_then *then);
	/* Slotted rows: where run r's write of f goes (NULL: f->ckpt_slot[r]). */
	uint8_t (*write_slot)(const struct pn_proto_ctx *c, struct pn_frame *f, int r);
	/* A data write of `page` binds its slot when dispatched (NULL: when issued). */
	bool (*bind_late)(const struct pn_proto_ctx *c, uint32_t page);
};

/* ---- checkpoint ---- */
struct pn_proto_ckpt {
	/* Begin, after the redo pointer is set (NULL: pn_ckpt_select at once). */
	void (*begin)(struct pn_proto_ctx *c, struct pn_ckpt_run *run);
	/* The slot run's write of f goes to, at selection (NULL: its current slot). */
	uint8_t (*slot)(const struct pn_proto_ctx *c, const struct pn_frame *f,
			const struct pn_ckpt_run *run);
	/* The row's steps of a run in PN_C_PROTO_SELECT (before WRITING) and PN_C_PROTO_DURABLE
	 * (after the data fsync; NULL: straight to RECORD), and the completion of an I/O one
	 * of them issued (pn_ckpt_run_io); each returns the delay before the next step. */
	uint64_t (*select_step)(struct pn_proto_ctx *c, struct pn_ckpt_run *run);
	uint64_t (*durable_step)(struct pn_proto_ctx *c, struct pn_ckpt_run *run);
	void (*io_done)(struct pn_proto_ctx *c, struct pn_ckpt_run *run);
	/* Before the control file write, and when the checkpoint has happened. */
	void (*control)(struct pn_proto_ctx *c, const struct pn_ckpt_run *run);
	void (*end)(struct pn_proto_ctx *c, const struct pn_ckpt_run *run);
	/* The background writer's extra work (l3/l4's map writer). */
	void (*background)(struct pn_proto_ctx *c);
};

/* ---- recovery ---- */
struct pn_proto_recovery {
	/* After the checkpoint record is read: the row's map of slots (false: failed). */
	bool (*begin)(struct pn_proto_ctx *c, const struct pn_control *ctl);
	/* Where replay starts (*from, <= redo) and what must happen before it (false: failed). */
	bool (*from)(struct pn_proto_ctx *c, pn_lsn redo, pn_lsn *from);
	/* A startup step the row takes itself (true), before any record is replayed. */
	bool (*redo_step)(struct pn_proto_ctx *c, struct pn_proc *p);
	/* Non-NULL: every replayed record goes here, and the buffer pool replays nothing. */
	void (*redo_record)(struct pn_proto_ctx *c, const struct pn_wal_record *r, pn_lsn start,
			    pn_lsn end);
	/* A replayed block whose header carries the row's extension (ext_len > 0, assemble
	 * wrote it), before its page is read or restored: the row's map from it (umbra-remap:
	 * the old and new physical blocks and the allocator frontier). */
	void (*redo_ext)(struct pn_proto_ctx *c, const struct pn_wal_block *b);
	/* An image-free shift's source before its page is read (false: proc is woken). */
	bool (*redo_source)(struct pn_proto_ctx *c, const struct pn_wal_block *b, uint32_t proc);
	/* Redo moved `page` to another slot. */
	void (*redo_shifted)(struct pn_proto_ctx *c, uint32_t page);
	void (*end)(struct pn_proto_ctx *c, pn_lsn end, pn_lsn last_start);
};

/* ---- the row's own process (the page server) ---- */
struct pn_proto_process {
	void (*start)(struct pn_proto_ctx *c);
	void (*step)(struct pn_proto_ctx *c);
	bool (*idle)(const struct pn_proto_ctx *c); /* NULL: always */
	void (*after_event)(struct pn_proto_ctx *c);
	/* Page `page` as of lsn into out, not from the buffer pool (NULL: the buffer or slot). */
	void (*read_page)(struct pn_proto_ctx *c, uint32_t page, pn_lsn lsn, uint8_t *out);
};

/* ---- memory and checks: the fingerprint and the row's invariants ---- */
struct pn_proto_state {
	/* Required: the row's memory a state's future depends on, into a fingerprint
	 * (pn_engine_memory; no times, no pointers, no metrics). Every field of the row's state
	 * is in it or named at the hook as not needed (a metric, a scratch buffer encoded from
	 * the rest); test_protocol's test_row_memory changes each and sees the fingerprint
	 * move. A row with no state names rows.h's pn_protocol_memory_none. */
	void (*memory)(const struct pn_proto_ctx *c, const struct pn_hasher *h);
	void (*check)(struct pn_proto_ctx *c);
	void (*check_frame)(struct pn_proto_ctx *c, uint32_t frame);
};

/* ---- metrics ---- */
struct pn_proto_metrics {
	/* At the end of a run: the row completes the engine's figures it changes. */
	void (*finish)(struct pn_proto_ctx *c);
};

struct pn_protocol_ops {
	const char *name;     /* "fpw", "umbra-l3", ... */
	bool fpw_byte;        /* the checkpoint record's full_page_writes byte */
	bool hint_delta;      /* a logged hint is XLOG2/HINT_DELTA, no image (l4) */
	unsigned store_flags; /* PN_STORE_SLOTTED (store.h): heap pages move between slots */
	struct pn_proto_setup setup;
	struct pn_proto_write write;
	struct pn_proto_buffer buffer;
	struct pn_proto_ckpt ckpt;
	struct pn_proto_recovery recovery;
	struct pn_proto_process process;
	struct pn_proto_state state;
	struct pn_proto_metrics metrics;
};

#endif

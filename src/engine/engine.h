/*
 * engine.h: the protocol engine, the state that the simulator and the real-disk backend
 * share (engine layer, owned by engine.c). One struct pn_engine holds every part; this header
 * keeps that struct (the assembly) and engine.c's functions (services.h has the violations,
 * the I/O table and the wakes),
 * and includes every part's own header (named after its .c; metrics.h for struct pn_metrics),
 * so a file that includes engine.h sees the whole engine. Each part's rules are in its file:
 *
 *   page.c      page format (24 B PostgreSQL header + heap-like body); btree.c, slru.c the
 *               other pages; redo.c the record kinds (rmgrlist.h) and what each does to a
 *               page (redo_heap.c, redo_btree.c, redo_xlog.c), at run time and in redo
 *   wal.c       WAL insert (LSN = byte position, MAXALIGNed records, 8 KiB pages), group
 *               flush, segment ring and recycling
 *   bufpool.c   buffer frames, clock-sweep eviction, write-out with WAL-before-data
 *   store.c     logical page -> physical slot: in place, or in generations with shifts and
 *               baselines for a row with PN_STORE_SLOTTED (the Umbra family)
 *   ckpt.c      the checkpointer: begin (redo pointer), paced writes, fsync, record, control
 *   backend.c   client backends: the steps of an update, a commit, script steps
 *   recovery.c  the startup process: control file -> checkpoint -> baselines -> redo
 *   engine.c    init, processes, triggers, the background writer and WAL writer, checks
 *   protocol.h  the protocol table: the engine calls a protocol only through e->proto, the
 *               row the assembly passes to pn_engine_init (src/protocol/list.h's rows:
 *               fpw.c, umbra.c, umbra_map.c, umbra_pool.c, umbra_gen2.c, doublewrite.c,
 *               pushdown.c; protocols.c the table)
 *   client.c    what a workload's changes use of the engine; client.h is the only thing the
 *               engine knows of a workload (struct pn_client_ops, struct pn_change): the
 *               workloads are above it, in src/workload/, and the assembly passes their row
 *               to pn_engine_init
 *
 * Numbered rules (each asserted where it is kept; protocol violations are reported through
 * pn_svc_violation() (services.h), not assertions, so that the checker can catch them):
 *   R1 WAL before data: a data page is written only after the WAL up to its LSN is flushed.
 *   R2 Commit durability: a commit is acknowledged only after its record is flushed.
 *   R3 Umbra baselines: no write goes to a slot that the last completed checkpoint (or the
 *      one whose control-file update is in flight) names as a page's recovery baseline,
 *      unless no record stamped the page after that checkpoint's redo pointer (an in-place
 *      write of hint-like changes: VISIBLE's REGBUF_NO_IMAGE heap page, docs/protocol.md 4.7a).
 *   R4 Umbra mapping: a page changed after the redo pointer of the last completed
 *      checkpoint is not mapped to that checkpoint's baseline slot.
 *   R5 Checkpoint order: every buffer dirty at begin is written (to its baseline slot in
 *      Umbra) and fsynced, the selector snapshot is durable, the checkpoint record is
 *      flushed, and only then is the control file updated; checkpoints complete in order.
 */
#ifndef PN_ENGINE_H
#define PN_ENGINE_H

#include "env.h"
#include "services.h"
#include "scenario.h"
#include "walfmt.h"
#include "crc32c.h"
#include "checksum.h"
#include "page.h"
#include "btree.h"
#include "slru.h"
#include "redo.h"
#include "redo_btree.h"
#include "redo_xlog.h"
#include "metrics.h"
#include "wal.h"
#include "bufpool.h"
#include "store.h"
#include "ckpt.h"
#include "client.h"
#include "backend.h"
#include "recovery.h"
#include "protocol.h"

/* ---- the engine ----
 * Complete only inside the engine's library (pn_engine defines PN_ENGINE_INTERNAL) and for
 * the engine's own unit tests; above it the struct is opaque: pn_engine_new, then the
 * accessors of the section "Accessors for the layers above". */
struct pn_engine;
#ifdef PN_ENGINE_INTERNAL
struct pn_engine {
	const struct pn_scenario *sc;
	struct pn_services svc; /* env, I/O table, wakes, violation, error (services.c) */
	uint32_t page_size;
	uint32_t heap_pages, slru_pages, pages; /* pages = heap_pages + slru_pages */
	uint32_t generations; /* physical slots per logical heap page (1 unless umbra) */
	uint64_t sysid;

	struct pn_wal wal; /* wal.c */

	struct pn_bufpool buf; /* frames, page -> frame (bufpool.c) */

	struct pn_store store; /* page -> slot, Umbra baselines (store.c) */
	struct pn_ckpt ckpt;   /* the checkpointer (ckpt.c) */

	/* processes: backends 0..clients-1, then checkpointer, bgwriter, walwriter, startup,
	 * page server (pushdown only runs it) */
	struct pn_proc *procs;
	uint32_t nprocs, nbackends;
	uint32_t proc_ckpt, proc_bgw, proc_walw, proc_startup, proc_row;
	uint32_t next_xid;
	bool stopping; /* workload done: let background work drain */

	struct pn_backends bk; /* acknowledged commits, in order (C1), and latencies (backend.c) */

	struct pn_recovery rcv; /* the startup process's replay (recovery.c) */

	/* the protocol (protocol.h): its row and the context its hooks get (with the row's own
	 * state, NULL if it has none) */
	const struct pn_protocol_ops *proto;
	struct pn_proto_ctx pctx;

	struct pn_metrics m;
	uint32_t check_frame_next; /* pn_engine_check()'s rotation */
	uint32_t check_calls;      /* pn_engine_check() calls since the modules' checks ran */
	/* the workload (client.h): its row and its state */
	const struct pn_client_ops *client;
	void *client_state;
	struct pn_client_handles cl; /* what the client services work with (client.h) */
};
#endif

/* A row's typed handles of the modules that name the protocol table (protocol.h cannot name
 * them back: the module graph has no circle), from its context: the buffer pool, the
 * checkpointer and the client services (pn_engine_init sets them), and nothing else of the
 * engine. */
static inline struct pn_bufpool *pn_proto_buf(const struct pn_proto_ctx *c)
{
	return c->buf_handle;
}
static inline struct pn_ckpt *pn_proto_ckpt(const struct pn_proto_ctx *c) { return c->ckpt_handle; }
static inline struct pn_client_handles *pn_proto_client(const struct pn_proto_ctx *c)
{
	return c->client_handle;
}

/* engine.c */
/* client: the workload's row (src/workload/workload.h pn_workload_of(sc) for a scenario's);
 * proto: the protocol's (src/protocol/protocols.h pn_protocol_of(sc)). */
bool pn_engine_init(struct pn_engine *e, const struct pn_scenario *sc, const struct pn_env *env,
		    bool fresh, const struct pn_client_ops *client,
		    const struct pn_protocol_ops *proto);
void pn_engine_free(struct pn_engine *e);
void pn_engine_format(struct pn_engine *e, pn_format_write_fn write, void *ctx);
/* CK3 (sim/chunks.h): the end of the data file pn_engine_format's pages fill, when a device
 * may build them on read instead (pn_engine_lazy_read); 0 when the workload cannot build a
 * page from its number alone (client.h page_init_fixed) or the protocol places or formats
 * the pages itself: then pn_engine_format it is. */
uint64_t pn_engine_lazy_end(const struct pn_engine *e);
/* pn_engine_format without the pages (the device, lazy below pn_engine_lazy_end, builds
 * them when read). */
void pn_engine_format_lazy(struct pn_engine *e, pn_format_write_fn write, void *ctx);
/* The data file bytes [off, off + len) as pn_engine_format left them (zeros where it wrote
 * no page); false when it wrote no page there. */
bool pn_engine_lazy_read(struct pn_engine *e, uint64_t off, uint32_t len, uint8_t *out);
/* Page p as formatting writes it (checksummed when the scenario asks). */
void pn_engine_initial_page(const struct pn_engine *e, uint32_t p, uint8_t *page);
void pn_engine_start(struct pn_engine *e); /* schedule every process */
/* Crash recovery begins (recovery.h pn_recovery_begin): false if it cannot. */
bool pn_engine_recover(struct pn_engine *e);
void pn_engine_fire(struct pn_engine *e, uint32_t proc, uint64_t token);
void pn_engine_io_done(struct pn_engine *e, struct pn_io *io);
bool pn_engine_finished(const struct pn_engine *e);
/* Field relationships, asserted; O(1) a call: frames in rotation each time, the modules'
 * checks (pn_wal_check, pn_svc_check, pn_store_check, the protocol's) every 8th call. */
void pn_engine_check(struct pn_engine *e);
/* What pn_engine_check() does to its frames' rotation, checking nothing: after an event
 * whose state an earlier run checked (the same events from the same start), so that the calls
 * after it check the frames they would have had every call checked. */
void pn_engine_check_skip(struct pn_engine *e);
/* Whether the event about to run is one whose state an earlier run checked (as for
 * pn_engine_check_skip): its reads' checksums are then not verified again (bufpool.c B10). */
void pn_engine_event_seen(struct pn_engine *e, bool seen);
void pn_engine_finish_metrics(struct pn_engine *e);
uint32_t pn_engine_xid_commit_count(const struct pn_engine *e);

/* ---- Accessors for the layers above (sim/, disk/, model/, cli/, fuzz/, tests) ----
 * What the world, the checker and the commands read of the engine, instead of its fields
 * (engine.c's last section; each a thin read, no state of its own). */

/* A zeroed engine for pn_engine_init; pn_engine_delete runs pn_engine_free (also after a
 * failed init) and frees it (NULL: nothing). */
struct pn_engine *pn_engine_new(void);
void pn_engine_delete(struct pn_engine *e);

/* The sizes and counts fixed at init. */
struct pn_geometry {
	uint32_t page_size;
	uint32_t heap_pages, slru_pages, pages; /* pages = heap_pages + slru_pages */
	uint32_t generations;                   /* physical slots per logical heap page */
	uint64_t sysid;
};
struct pn_geometry pn_engine_geometry(const struct pn_engine *e);
/* The relation's size now (heap pages; a truncation shrinks it, an extension regrows it). */
uint32_t pn_engine_rel_blocks(const struct pn_engine *e);
const struct pn_scenario *pn_engine_scenario(const struct pn_engine *e);
/* The workload's row, and its state in *state (what its init returned; NULL before). */
const struct pn_client_ops *pn_engine_client(const struct pn_engine *e, void **state);

/* The I/O table: index 0 .. count-1 (an I/O's index is its place once handed out, services.c
 * SV1; the world dispatches and completes I/Os by it). */
uint32_t pn_engine_io_count(const struct pn_engine *e);
struct pn_io *pn_engine_io(struct pn_engine *e, uint32_t index);

/* Processes 0 .. count-1 (backends first), as a trace or a timer needs them. */
struct pn_proc_info {
	enum pn_proc_kind kind;
	uint32_t state;      /* a backend's step: enum pn_bstate; in PN_B_PROTO, PN_B_PROTO +
			       * the protocol row's sub-state (pn_proc.proto_sub) */
	struct pn_step op;   /* a backend's operation in progress */
	uint32_t xid;        /* a backend's transaction, 0 if none */
	uint64_t wake_token; /* only the step scheduled last runs (pn_engine_fire) */
};
uint32_t pn_engine_proc_count(const struct pn_engine *e);
void pn_engine_proc_info(const struct pn_engine *e, uint32_t proc, struct pn_proc_info *out);
/* proc's pending wake's token (pn_proc_info.wake_token alone: the world's stale test). */
uint64_t pn_engine_wake_token(const struct pn_engine *e, uint32_t proc);

/* The commits acknowledged since the last drain (backend.h's struct pn_acks_view, C1); drain
 * hands each to fn (latency 0 past nlat) and empties the log. */
void pn_engine_acks(const struct pn_engine *e, struct pn_acks_view *out);
void pn_engine_drain_acks(struct pn_engine *e, pn_ack_fn fn, void *arg);

/* A protocol violation stopped the run (pn_svc_violation); which one. */
bool pn_engine_failed(const struct pn_engine *e);
const struct pn_violation *pn_engine_violation_of(const struct pn_engine *e);
/* Why pn_engine_init refused the scenario. */
const char *pn_engine_error(const struct pn_engine *e);
const struct pn_metrics *pn_engine_metrics(const struct pn_engine *e);
/* The end of the WAL recovery replayed (valid once it finished). */
pn_lsn pn_engine_recovery_end(const struct pn_engine *e);
/* The WAL flushed so far (end LSN), and the oldest LSN recovery may need (W6). */
pn_lsn pn_engine_wal_flushed(const struct pn_engine *e);
pn_lsn pn_engine_wal_keep_from(const struct pn_engine *e);
/* The WAL insert position (the end of the last record inserted). */
pn_lsn pn_engine_wal_insert_lsn(const struct pn_engine *e);
/* Whether logical page p is an SLRU page (after the heap; one slot, its own header rules). */
bool pn_engine_is_slru(const struct pn_engine *e, uint32_t p);
/* The WAL's segment size; the in-memory WAL page at page_addr (held: not yet recycled); the
 * redo pointer the format's checkpoint record set (where the WAL of a run begins). */
uint32_t pn_engine_wal_seg_size(const struct pn_engine *e);
/* The offset in the WAL file (PN_FILE_WAL) of the byte at lsn. */
uint64_t pn_engine_wal_file_offset(const struct pn_engine *e, pn_lsn lsn);
const uint8_t *pn_engine_wal_ring_page(const struct pn_engine *e, pn_lsn page_addr);
pn_lsn pn_engine_format_redo(const struct pn_engine *e);
/* Checkpoints begun and completed so far (their sequence numbers). */
void pn_engine_ckpt_seqs(const struct pn_engine *e, uint64_t *begun, uint64_t *done);
/* Umbra: heap page p's active slot and the slot the last completed checkpoint keeps as its
 * baseline; false when the mode has one slot per page. */
bool pn_engine_page_slots(const struct pn_engine *e, uint32_t p, uint8_t *active,
			  uint8_t *baseline);
/* The size file f has on a freshly formatted device (disk/ creates the files at it). */
uint64_t pn_engine_file_size(const struct pn_engine *e, enum pn_file f);
/* Page `page` as the engine would read it now: its buffer if resident, else its current
 * slot read through env.read_sync (zeros if that fails); pushdown: what the page server
 * reconstructs as of `lsn`. *in_memory (may be NULL): the bytes did not come from a slot
 * (a buffer or the page server), so they need not verify as a read would. */
void pn_engine_read_page(struct pn_engine *e, uint32_t page, pn_lsn lsn, uint8_t *out,
			 bool *in_memory);
/* Whether pn_engine_read_page(page) would copy a buffer's bytes (resident, no row reads it
 * otherwise): bytes pn_engine_memory feeds whole. */
bool pn_engine_page_in_buffer(const struct pn_engine *e, uint32_t page);
/* The bytes pn_engine_read_page(page) would copy when pn_engine_page_in_buffer(page), read in
 * place (valid until the engine's next event); NULL otherwise. */
const uint8_t *pn_engine_page_view(struct pn_engine *e, uint32_t page);
/* Feeds into h the engine memory a state's future depends on that the accessors above do not
 * show (sim/world.c pn_world_fingerprint takes it): the checkpointer's request and each run's
 * state, protocol sub-state, number, redo pointer, progress and flags (not its times); the
 * buffer pool's whole state (every frame's fields and resident bytes, the clock hand, each
 * process's victim); then the protocol row's (protocol.h memory: l3/l4's selector pages and
 * pending publications). */
void pn_engine_memory(const struct pn_engine *e, const struct pn_hasher *h);
/* The furthest phase of the checkpoint runs in progress (ckpt.h). */
enum pn_ckpt_phase pn_engine_ckpt_phase(const struct pn_engine *e);

#endif

/*
 * ckpt.h: the checkpointer (engine layer, owned by ckpt.c, which keeps R5 and documents the
 * control file byte by byte): the control file's codec and struct pn_ckpt, the checkpointer's
 * own state (its runs, the requests, the sequence numbers, the control file it last wrote)
 * with the handles it works with (struct pn_ckpt_handles, set at init). The causes of a
 * checkpoint, one run's state machine and the control file's contents are ckpt_run.h's.
 */
#ifndef PN_CKPT_H
#define PN_CKPT_H

#include "bufpool.h"
#include "ckpt_run.h"
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

/*
 * Where a run is relative to its data fsync: not running; before the fsync completed
 * (PROTO_SELECT, WRITING .. FSYNC_DATA); after it (PROTO_DURABLE .. CONTROL_FSYNC: the data
 * is durable, the control file not yet updated). A state's phase is named case by case in pn_ckpt_run_phase(), never by its order
 * in enum pn_cstate.
 */
enum pn_ckpt_phase { PN_CKPT_PHASE_IDLE, PN_CKPT_PHASE_BEFORE_FSYNC, PN_CKPT_PHASE_AFTER_FSYNC };

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

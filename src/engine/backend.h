/*
 * backend.h: the processes (engine layer; struct pn_proc is every process's, e->procs, and
 * most of its fields are the client backends', owned by backend.c): the process kinds, a
 * backend's steps for one operation (its state machine), and backend.c's functions.
 */
#ifndef PN_BACKEND_H
#define PN_BACKEND_H

#include "scenario.h"
#include "walfmt.h"
#include "client.h"

struct pn_engine;

enum pn_proc_kind { PN_PROC_BACKEND, PN_PROC_CHECKPOINTER, PN_PROC_BGWRITER, PN_PROC_WALWRITER,
		    PN_PROC_STARTUP, PN_PROC_PAGESERVER };

/*
 * A backend's steps for one operation (backend.c):
 *
 *   NEXT --next op--> PIN --frame ready--> DECIDE --yield--> INSERT --> NEXT
 *                      |  (miss: victim write-out, WAL flush first; read)
 *   NEXT --commit--> COMMIT_INSERT --> COMMIT_WAIT --flushed--> NEXT (acknowledged)
 *   NEXT --checkpoint, evict--> WAIT_CKPT / EVICT_WAIT --> NEXT
 */
enum pn_bstate {
	PN_B_NEXT, PN_B_PIN, PN_B_DECIDE, PN_B_INSERT, PN_B_COMMIT_WAIT, PN_B_WAIT_CKPT,
	PN_B_EVICT_WAIT, PN_B_DONE,
	/* Umbra l3/l4 (umbra_policy.c): INSERT --> PUBLISH (a separate step: the window
	 * between the shift's WAL and its selector publication, under DELAY_CHKPT_START);
	 * a script update_hold stays in HELD there until its release step. */
	PN_B_PUBLISH, PN_B_HELD
};

struct pn_proc {
	enum pn_proc_kind kind;
	uint32_t id;
	pn_lsn wait_lsn;      /* the commit record's end LSN it waits to be flushed */
	/* backend */
	enum pn_bstate state;
	struct pn_step op;    /* the operation in progress */
	uint32_t frame;
	uint32_t item;        /* tuple chosen for the change */
	uint32_t xid;         /* current transaction, 0 if none */
	pn_lsn decided_redo;  /* RedoRecPtr read at DECIDE */
	bool decided_image, decided_shift;
	uint64_t commit_start_ns;
	uint32_t ops_in_txn;
	uint64_t ckpt_wait_seq;
	/* Umbra l3/l4: a shift inserted and not yet published (DELAY_CHKPT_START) */
	bool delay_chkpt;
	uint32_t pub_target;
	pn_lsn pub_lsn;
	bool hold;            /* script update_hold: stay HELD before publishing */
	/* PN_OP_CHANGE (pgbench, tpcc): the change, its pinned frames, per-block decisions */
	struct pn_change chg;
	uint32_t chg_frames[PN_CHANGE_MAX_BLOCKS];
	uint32_t chg_pinned;
	uint8_t chg_image, chg_shift, chg_init; /* bit i: block i */
	int txn_type;         /* workload transaction type, -1 if none */
	uint64_t txn_wal;     /* WAL bytes of the current transaction's records */
	/* other pages a workload op changes (vacuum: the visibility-map page; a btree split:
	 * the new page, the right sibling), pinned in order before `frame` (client.c) */
	uint32_t extra_frames[2];
	uint32_t nextra;
	/* an eviction's victim it holds while the WAL flush is waited for (bufpool.c B7) */
	bool victim_held;
	uint32_t victim;
};

/* backend.c */
void pn_backend_step(struct pn_engine *e, struct pn_proc *p);
/* Umbra: `page` now lives in slot `target` (after its record is inserted; R4 checked). */
void pn_backend_publish_shift(struct pn_engine *e, uint32_t page, uint32_t target);

#endif

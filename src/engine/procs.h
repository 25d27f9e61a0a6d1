/*
 * procs.h: the processes (engine layer, a header of types only, below every module that
 * names a process): the process kinds, a backend's steps for one operation (its state
 * machine, driven by backend.c), struct pn_proc (every process's, e->procs; most of its
 * fields are the client backends') and struct pn_change, the change of a realistic workload
 * a backend runs (filled by the workload through client.h, its record built by backend.c).
 */
#ifndef PN_PROCS_H
#define PN_PROCS_H

#include "redo.h"
#include "scenario.h"
#include "walfmt.h"

/* ---- a change of the realistic workloads (backend.c builds its record, page.c applies it) */
#define PN_CHANGE_MAX_BLOCKS 2
struct pn_change {
	enum pn_rec kind; /* HEAP_INSERT, HEAP_UPDATE, HEAP_HOT_UPDATE, HEAP_LOCK,
				    * HEAP_DELETE, HEAP2_PRUNE, BTREE_INSERT_LEAF, BTREE_SPLIT_R (L or R
				    * is chosen when it runs); +INIT variants are chosen when the
				    * page turns out new */
	uint8_t nblocks;
	uint32_t pages[PN_CHANGE_MAX_BLOCKS]; /* block 0, block 1 (UPDATE: old; split: right) */
	uint16_t offnum;         /* heap: the tuple on block 0 (insert: where it goes) */
	uint16_t old_offnum;     /* UPDATE: the old tuple on block 1 */
	uint16_t t_len;          /* heap insert / update: the new tuple's length */
	uint16_t prefix, suffix; /* HOT_UPDATE: unchanged bytes before / after the change */
	uint16_t change_len;     /* HOT_UPDATE: changed bytes (written at prefix) */
	uint64_t key;            /* btree: the new index tuple's key */
	uint64_t split_key;      /* split: items with key >= split_key go right */
	uint16_t itup_len;       /* btree: index tuple bytes */
	uint32_t heap_blk;       /* btree: the heap TID the index tuple points at */
	uint16_t heap_off;
	uint16_t nredirected, ndead, nunused; /* PRUNE: line pointers it names */
	uint8_t index;                        /* workload's index id (split completion callback) */
	uint32_t leaf;                        /* workload's leaf id (split completion callback) */
};

enum pn_proc_kind {
	PN_PROC_BACKEND,
	PN_PROC_CHECKPOINTER,
	PN_PROC_BGWRITER,
	PN_PROC_WALWRITER,
	PN_PROC_STARTUP,
	PN_PROC_ROW /* the protocol row's own process (protocol.h process hooks) */
};

/*
 * A backend's steps for one operation (backend.c; every edge asserted by
 * pn_backend_set_state):
 *
 *   NEXT --next op--> PIN --frame ready--> DECIDE --yield--> INSERT --> NEXT
 *                      |  (miss: victim write-out, WAL flush first; read)
 *   NEXT --commit (record inserted)--> COMMIT_WAIT --flushed--> NEXT (acknowledged)
 *   NEXT --checkpoint, evict--> WAIT_CKPT / EVICT_WAIT --> NEXT
 *   NEXT --a read-only commit, an abort, a release--> NEXT;  NEXT --workload done--> DONE
 *   INSERT --> PROTO --> NEXT (the protocol's own step after the insert, below)
 * The startup process (recovery.c) uses three of them: DONE --recovery begins--> NEXT
 * (replay) --end of WAL--> WAIT_CKPT --end-of-recovery checkpoint--> DONE.
 */
enum pn_bstate {
	PN_B_NEXT,
	PN_B_PIN,
	PN_B_DECIDE,
	PN_B_INSERT,
	PN_B_COMMIT_WAIT,
	PN_B_WAIT_CKPT,
	PN_B_EVICT_WAIT,
	PN_B_DONE,
	/* The protocol's step after INSERT (protocol.h after_insert, proc_step); its own
	 * states are p->proto_sub, the row's enum (umbra l3/l4: the publication of a shift
	 * under DELAY_CHKPT_START, and an update_hold waiting for its release). The world sees
	 * PN_B_PROTO + proto_sub (pn_engine_proc_info): the numbers of the states the rows'
	 * steps had when they were in this enum. */
	PN_B_PROTO,
	PN_B_COUNT
};

struct pn_proc {
	enum pn_proc_kind kind;
	uint32_t id;
	pn_lsn wait_lsn; /* the commit record's end LSN it waits to be flushed */
	/* backend */
	enum pn_bstate state;
	struct pn_step op; /* the operation in progress */
	uint32_t frame;
	uint32_t item;       /* tuple chosen for the change */
	uint32_t xid;        /* current transaction, 0 if none */
	pn_lsn decided_redo; /* RedoRecPtr read at DECIDE */
	bool decided_image, decided_shift;
	bool extended; /* the op's page was extended at its pin: its record carries an image */
	uint64_t commit_start_ns;
	uint32_t ops_in_txn;
	uint64_t ckpt_wait_seq;
	int proto_sub; /* PN_B_PROTO: the protocol row's sub-state (its enum) */
	bool hold;     /* script update_hold: the protocol's step waits for the release */
	/* PN_OP_CHANGE (pgbench, tpcc): the change, its pinned frames, per-block decisions */
	struct pn_change chg;
	uint32_t chg_frames[PN_CHANGE_MAX_BLOCKS];
	uint32_t chg_pinned;
	uint8_t chg_image, chg_shift, chg_init; /* bit i: block i */
	int txn_type;                           /* workload transaction type, -1 if none */
	uint64_t txn_wal;                       /* WAL bytes of the current transaction's records */
	/* other pages a workload op changes (vacuum: the visibility-map page; a btree split:
	 * the new page, the right sibling), pinned in order before `frame` (client.c) */
	uint32_t extra_frames[2];
	uint32_t nextra;
};

#endif

/*
 * engine.h: the protocol engine, the state that the simulator and the real-disk backend
 * share. One struct pn_engine holds every part; each part's rules are in its own file:
 *
 *   page.c      page format (24 B PostgreSQL header + heap-like body), the changes records
 *               make, and their redo
 *   wal.c       WAL insert (LSN = byte position, MAXALIGNed records, 8 KiB pages), group
 *               flush, segment ring and recycling
 *   bufpool.c   buffer frames, clock-sweep eviction, write-out with WAL-before-data
 *   store.c     logical page -> physical slot: in place (fpw, nofpw), Umbra generations with
 *               shifts and baselines, the doublewrite area
 *   ckpt.c      the checkpointer: begin (redo pointer), paced writes, fsync, record, control
 *   backend.c   client backends: the steps of an update, a commit, script steps
 *   recovery.c  the startup process: control file -> checkpoint -> baselines -> redo
 *   engine.c    init, processes, triggers, the background writer and WAL writer, checks
 *   workload.c  what clients do (script, random)
 *   pushdown.c  the pushdown mode's page server: WAL ingestion, per-page delta chains,
 *               image materialisation, GetPage@LSN, its crash-safe storage and recovery
 *
 * Numbered rules (each asserted where it is kept; protocol violations are reported through
 * pn_engine_violation(), not assertions, so that the checker can catch them):
 *   R1 WAL before data: a data page is written only after the WAL up to its LSN is flushed.
 *   R2 Commit durability: a commit is acknowledged only after its record is flushed.
 *   R3 Umbra baselines: no write goes to a slot that the last completed checkpoint (or the
 *      one whose control-file update is in flight) names as a page's recovery baseline.
 *   R4 Umbra mapping: a page changed after the redo pointer of the last completed
 *      checkpoint is not mapped to that checkpoint's baseline slot.
 *   R5 Checkpoint order: every buffer dirty at begin is written (to its baseline slot in
 *      Umbra) and fsynced, the selector snapshot is durable, the checkpoint record is
 *      flushed, and only then is the control file updated; checkpoints complete in order.
 */
#ifndef PN_ENGINE_H
#define PN_ENGINE_H

#include "env.h"
#include "scenario.h"
#include "walfmt.h"

/* ---- page format (page.c) ---- */
#define PN_PAGE_HEADER 24u
#define PN_PD_ALL_VISIBLE 0x0004u
#define PN_TUPLE_HEADER 24u
#define PN_TUPLE_LEN 104u          /* tuple header + 80 B payload */
#define PN_HINT_XMIN_COMMITTED 0x0100u
#define PN_HINT_FROZEN 0x0300u

/* Record kinds, for accounting shaped like pg_waldump --stats=record. */
enum pn_rec {
	PN_REC_HEAP_HOT_UPDATE, PN_REC_HEAP2_FREEZE_PAGE, PN_REC_BTREE_DEDUP, PN_REC_XACT_COMMIT,
	PN_REC_XACT_ABORT, PN_REC_XLOG_CHECKPOINT_ONLINE, PN_REC_XLOG_CHECKPOINT_SHUTDOWN,
	PN_REC_XLOG_FPI_FOR_HINT, PN_REC_CLOG_SET,
	PN_REC_XLOG2_HINT_DELTA, /* Umbra l4: hint bits as final-byte fragments (umbra_policy.c) */
	/* the records pgbench and tpcc produce (page.c; PostgreSQL 15's layouts) */
	PN_REC_HEAP_INSERT, PN_REC_HEAP_INSERT_INIT, PN_REC_HEAP_UPDATE, PN_REC_HEAP_UPDATE_INIT,
	PN_REC_HEAP_LOCK, PN_REC_HEAP_DELETE, PN_REC_BTREE_INSERT_LEAF, PN_REC_BTREE_SPLIT_L,
	PN_REC_BTREE_SPLIT_R, PN_REC_HEAP2_PRUNE,
	/* the vacuum workload's (wl_vacuum.c) */
	PN_REC_HEAP2_VISIBLE,
	PN_REC_COUNT
};
const char *pn_rec_name(enum pn_rec r); /* "Heap/HOT_UPDATE" */
/* rmid/info of each kind */
void pn_rec_ids(enum pn_rec r, uint8_t *rmid, uint8_t *info);
bool pn_rec_from_ids(uint8_t rmid, uint8_t info, enum pn_rec *out);

void pn_page_init(uint8_t *page, uint32_t page_size, uint32_t blkno, bool slru);
pn_lsn pn_page_lsn(const uint8_t *page);
void pn_page_set_lsn(uint8_t *page, pn_lsn lsn);
uint32_t pn_page_nitems(const uint8_t *page);
/* The hole [pd_lower, pd_upper) if the header is sane, else {0,0}. */
void pn_page_hole(const uint8_t *page, uint32_t page_size, uint16_t *off, uint16_t *len);
void pn_page_set_checksum(uint8_t *page, uint32_t page_size, uint32_t blkno);
/* True when the page verifies: all zero, or sane header (and checksum when asked). */
bool pn_page_verify(const uint8_t *page, uint32_t page_size, uint32_t blkno, bool checksums);
/*
 * Applies the change a record describes to one page (block ref `b` of record `r`). Used by
 * normal operation after building a record and by redo: the same function, so a record
 * means one thing. Returns false if the record does not fit the page.
 */
bool pn_page_apply(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		   const struct pn_wal_block *b);
/*
 * Heap and btree pages of the realistic workloads (page.c header): variable-length tuples
 * and index tuples. pn_heap_page_fill() formats a heap page holding `rows` tuples of t_len
 * bytes (payload derived from blkno); pn_btree_leaf_fill() a btree leaf holding index
 * tuples of `itup_len` bytes with the given keys, each pointing at heap TID (key, 1).
 */
#define PN_ITUP_HEADER 8u        /* IndexTupleData: t_tid 6 B + t_info 2 B */
#define PN_BTREE_SPECIAL 16u     /* BTPageOpaqueData */
void pn_heap_page_fill(uint8_t *page, uint32_t page_size, uint32_t blkno, uint32_t rows,
		       uint32_t t_len);
void pn_btree_leaf_fill(uint8_t *page, uint32_t page_size, const uint64_t *keys, uint32_t n,
			uint32_t itup_len);
uint32_t pn_heap_rows_per_page(uint32_t page_size, uint32_t t_len, uint32_t fillfactor);
uint32_t pn_btree_items_per_page(uint32_t page_size, uint32_t itup_len);
/* Writes an index tuple (key, heap TID) of itup_len bytes into out. */
void pn_itup_make(uint8_t *out, uint32_t itup_len, uint64_t key, uint32_t heap_blk,
		  uint16_t heap_off);
/* The offset number (1-based) a new index tuple with `key` takes on a leaf: after every
 * item whose key is <= key (so it also works on leaves holding out-of-range keys). */
uint16_t pn_btree_insert_offnum(const uint8_t *page, uint64_t key);
/* How many of the leaf's items have a key < `key`, i.e. firstrightoff - 1 of a split there. */
uint16_t pn_btree_count_below(const uint8_t *page, uint64_t key);
/* Concatenated index tuples of items [from, nitems) of a leaf into out; returns bytes. */
uint32_t pn_btree_items_copy(const uint8_t *page, uint16_t from, uint8_t *out, uint32_t cap);
/* The split record of leaf `left` (its items before the change) taking index tuple itup
 * (itup_len B, its key u64 at 8) at split_key, the first key that goes right: main (10 B),
 * block 0's data (the new item if it stays left, then the high key: data0 holds 2 tuples)
 * and block 1's (the right page's items, the new one among them if it goes right: data1
 * holds a page) into rec; returns SPLIT_L or SPLIT_R. rec's blocks' numbers are the
 * caller's (a third block, the old right sibling, too). */
enum pn_rec pn_btree_split_record(const uint8_t *left, uint32_t page_size, const uint8_t *itup,
				  uint32_t itup_len, uint64_t split_key, struct pn_wal_record *rec,
				  uint8_t *main, uint8_t *data0, uint8_t *data1);
/* The same with the split's place given: the first `below` items stay left, the others
 * (keys >= split_key, which may equal the last left key: a split among one key's
 * duplicates) go right; the new item goes left iff its key < split_key. */
enum pn_rec pn_btree_split_record_at(const uint8_t *left, uint32_t page_size,
				     const uint8_t *itup, uint32_t itup_len, uint16_t below,
				     uint64_t split_key, struct pn_wal_record *rec, uint8_t *main,
				     uint8_t *data0, uint8_t *data1);
/* True when the page is new (all-zero header: never initialized). */
bool pn_page_is_new(const uint8_t *page);
/* Free bytes between pd_lower and pd_upper. */
uint32_t pn_page_free(const uint8_t *page);
/* Sets a hint bit on item `item` (no record). */
void pn_page_set_hint(uint8_t *page, uint32_t item);
/* Commit-status bits of xid on an SLRU page (2 bits per xid). */
void pn_slru_set(uint8_t *page, uint32_t page_size, bool header, uint32_t xid);
uint32_t pn_slru_page_of(uint32_t xid, uint32_t page_size, bool header, uint32_t slru_pages);

/* ---- metrics ---- */
#define PN_TXN_TYPES 5
struct pn_metrics {
	uint64_t transactions, commits, aborts;
	uint64_t wal_bytes, wal_records, fpi_count, fpi_bytes;
	uint64_t rec_count[PN_REC_COUNT], rec_bytes[PN_REC_COUNT], rec_fpi_bytes[PN_REC_COUNT];
	uint64_t shifts;
	uint64_t data_bytes_written, data_writes, data_bytes_read, data_reads;
	uint64_t dw_bytes_written, wal_write_bytes;
	uint64_t fsyncs, wal_flushes;
	uint64_t logical_bytes_changed;
	uint64_t checkpoints, ckpt_time, ckpt_xact, ckpt_wal, ckpt_request;
	uint64_t slots_used;
	uint64_t read_runs;
	uint64_t recovery_records, recovery_pages_read;
	uint64_t elapsed_ns;
	uint64_t commit_latency_ns_p50, commit_latency_ns_p99, commit_latency_ns_max;
	uint64_t evictions, bgwriter_writes, ckpt_writes, stalls_wal;
	/* pushdown (pushdown.c): the page server's work */
	uint64_t ps_reads;                 /* GetPage@LSN requests served */
	uint64_t ps_deltas_replayed;       /* deltas applied to serve them */
	uint64_t ps_replay_p50, ps_replay_p99, ps_replay_max; /* deltas per read */
	uint64_t ps_delta_records, ps_delta_bytes; /* (record, page) deltas ingested */
	uint64_t ps_images, ps_image_bytes, ps_meta_bytes, ps_fsyncs, ps_rounds;
	/* per transaction type of the workload (tpcc: NewOrder, Payment, OrderStatus,
	 * Delivery, StockLevel; pgbench: TPC-B): commits, and WAL bytes of their records */
	uint64_t txn_type_count[PN_TXN_TYPES], txn_type_wal[PN_TXN_TYPES];
};

/* ---- violations (protocol invariants; the run stops, the checker reports) ---- */
enum pn_violation_kind {
	PN_VIOL_NONE, PN_VIOL_WAL_BEFORE_DATA, PN_VIOL_PROTECTED_SLOT, PN_VIOL_MAPPING,
	PN_VIOL_CHECKSUM, PN_VIOL_RECOVERY, PN_VIOL_DURABILITY, PN_VIOL_EXACTNESS, PN_VIOL_SPACE,
	PN_VIOL_COUNT
};
const char *pn_violation_name(enum pn_violation_kind k);

struct pn_violation {
	enum pn_violation_kind kind;
	uint32_t page;
	char detail[256];
};

/* ---- buffer pool (bufpool.c) ---- */
#define PN_NO_FRAME UINT32_MAX
#define PN_MAX_CKPT_RUNS 2

struct pn_frame {
	uint32_t page;        /* PN_NO_FRAME if empty */
	bool valid;           /* holds the page's bytes */
	bool dirty;
	bool dirty_hint_only; /* dirtied only by hint bits, no WAL */
	bool redirtied;       /* changed while a write was in flight */
	bool locked;          /* exclusive content lock (a backend between decide and insert) */
	uint16_t pins;
	uint8_t usage;        /* clock sweep, <= 5 */
	uint8_t io_reads;     /* read in flight */
	uint8_t io_writes;    /* writes in flight */
	uint8_t ckpt_needed;  /* bit r: checkpoint run r must write this frame */
	uint8_t ckpt_slot[PN_MAX_CKPT_RUNS]; /* Umbra: where run r must write it */
	pn_lsn last_lsn;      /* LSN of the last WAL-logged change (SLRU pages have none) */
	uint64_t shift_epoch; /* Umbra l4: seq of the checkpoint epoch it last shifted in (0: none) */
};

/* ---- a change of the realistic workloads (backend.c builds its record, page.c applies it) */
#define PN_CHANGE_MAX_BLOCKS 2
struct pn_change {
	enum pn_rec kind;          /* HEAP_INSERT, HEAP_UPDATE, HEAP_HOT_UPDATE, HEAP_LOCK,
				    * HEAP_DELETE, HEAP2_PRUNE, BTREE_INSERT_LEAF, BTREE_SPLIT_R (L or R
				    * is chosen when it runs); +INIT variants are chosen when the
				    * page turns out new */
	uint8_t nblocks;
	uint32_t pages[PN_CHANGE_MAX_BLOCKS]; /* block 0, block 1 (UPDATE: old; split: right) */
	uint16_t offnum;           /* heap: the tuple on block 0 (insert: where it goes) */
	uint16_t old_offnum;       /* UPDATE: the old tuple on block 1 */
	uint16_t t_len;            /* heap insert / update: the new tuple's length */
	uint16_t prefix, suffix;   /* HOT_UPDATE: unchanged bytes before / after the change */
	uint16_t change_len;       /* HOT_UPDATE: changed bytes (written at prefix) */
	uint64_t key;              /* btree: the new index tuple's key */
	uint64_t split_key;        /* split: items with key >= split_key go right */
	uint16_t itup_len;         /* btree: index tuple bytes */
	uint32_t heap_blk;         /* btree: the heap TID the index tuple points at */
	uint16_t heap_off;
	uint16_t nredirected, ndead, nunused; /* PRUNE: line pointers it names */
	uint8_t index;             /* workload's index id (split completion callback) */
	uint32_t leaf;             /* workload's leaf id (split completion callback) */
};

/* ---- processes ---- */
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
	bool scheduled;
	uint64_t wake_at;     /* virtual time of the pending step */
	uint64_t wake_token;  /* only the step scheduled last runs */
	bool waiting_flush;   /* on the WAL flush wait list */
	pn_lsn wait_lsn;
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
	uint32_t txn_pages[PN_WAL_MAX_BLOCKS]; /* random workload: the transaction's pages */
	uint32_t txn_pos, txn_len;
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
	 * the new page, the right sibling), pinned in order before `frame` (wl_record.c) */
	uint32_t extra_frames[2];
	uint32_t nextra;
};

/* ---- checkpointer (ckpt.c) ---- */
#define PN_CONTROL_SIZE_ 512u
/* Selector areas: checkpoint n writes area n % 3, never the one the completed checkpoint
 * names, even with two checkpoints in progress (overlap). */
#define PN_SELECTOR_AREAS 3u
enum pn_ckpt_cause { PN_CKPT_TIME, PN_CKPT_XACT, PN_CKPT_WAL, PN_CKPT_REQUEST, PN_CKPT_END_OF_RECOVERY };

/*
 * One checkpoint run:
 *   IDLE --ckpt_begin()--> WRITING --all written--> WAIT_WRITES --> FSYNC_DATA -->
 *   [umbra: SELECTOR_WRITE --> SELECTOR_FSYNC] --> RECORD (insert, flush WAL) -->
 *   CONTROL_WRITE --> CONTROL_FSYNC --ckpt_end()--> IDLE
 * A script's checkpoint_begin pauses a run in WRITING until checkpoint_end.
 */
enum pn_cstate {
	PN_C_IDLE, PN_C_WRITING, PN_C_WAIT_WRITES, PN_C_FSYNC_DATA, PN_C_SELECTOR_WRITE,
	PN_C_SELECTOR_FSYNC, PN_C_RECORD, PN_C_RECORD_FLUSH, PN_C_CONTROL_WRITE,
	PN_C_CONTROL_FSYNC,
	/* Umbra l3/l4 (umbra_policy.c): begin --> SELECT (wait for DELAY_CHKPT_START, flag
	 * the dirty buffers) --> MAP_WRITE (selector pages, WAL first) --> WRITING ...
	 * FSYNC_DATA --> SELECTOR_FSYNC --> RECORD ... */
	PN_C_SELECT, PN_C_MAP_WRITE
};

struct pn_ckpt_run {
	enum pn_cstate state;
	enum pn_ckpt_cause cause;
	uint64_t seq;          /* checkpoint number, 1.. (0 = the initial state) */
	pn_lsn redo;
	pn_lsn record;         /* start LSN of its checkpoint record */
	uint64_t start_ns;
	uint32_t scan;         /* next frame to look at */
	uint32_t to_write, written;
	bool paused;           /* script checkpoint_begin */
	bool pause_select;     /* script checkpoint_epoch (l3/l4): pause before selection */
	uint64_t select_ns;    /* l3/l4: CheckPointGuts' work before selection ends then */
	bool delay_wait;       /* l3/l4: waiting for a backend in DELAY_CHKPT_START */
	bool immediate;
	bool io_pending;
	uint8_t *snapshot;     /* Umbra: each page's slot at the redo pointer (its baseline) */
	uint8_t *selbuf;       /* the selector area it writes */
	uint8_t ctlbuf[PN_CONTROL_SIZE_];
	pn_lsn record_end;
};

/* ---- control file (written by ckpt.c; its bytes are documented there) ---- */
struct pn_control {
	uint64_t ckpt_seq;
	pn_lsn checkpoint;     /* start of the checkpoint record */
	pn_lsn redo;
	uint32_t selector_area;
	uint32_t state;        /* 1 in production, 2 in recovery */
};
#define PN_CONTROL_SIZE PN_CONTROL_SIZE_

/* ---- the engine ---- */
struct pn_engine {
	const struct pn_scenario *sc;
	struct pn_env env;
	uint32_t page_size;
	uint32_t heap_pages, slru_pages, pages; /* pages = heap_pages + slru_pages */
	uint32_t generations;  /* physical slots per logical heap page (1 unless umbra) */
	uint64_t sysid;

	/* WAL (wal.c) */
	struct {
		uint32_t seg_size;
		uint32_t nsegs;          /* segment ring on the device */
		uint64_t insert_bytepos;
		pn_lsn prev_start;       /* start LSN of the last record */
		pn_lsn redo;             /* RedoRecPtr */
		pn_lsn written, flushed; /* end LSNs */
		uint8_t *pages;          /* ring of WAL pages in memory */
		uint64_t *tags;          /* the page address each ring slot holds */
		uint32_t npages;
		pn_lsn ring_base;        /* first page address still held (not yet written) */
		bool flush_in_flight;
		pn_lsn flush_target;
		uint32_t flush_ios;      /* writes of the current flush still in flight */
		pn_lsn keep_from;        /* oldest LSN recovery may need */
		uint64_t seg_removed;    /* W6: segments below this are removed (or predate us) */
		uint64_t seg_entered;    /* W6: the newest segment the insert position entered */
		uint8_t *rec_buf;        /* encode scratch */
		uint32_t rec_cap;
	} wal;

	/* buffer pool */
	struct pn_frame *frames;
	uint8_t *frame_data;
	uint32_t nframes;
	uint32_t clock_hand;
	uint32_t *page_frame;     /* page -> frame or PN_NO_FRAME */

	/* store: Umbra state (store.c) */
	uint8_t *cur;             /* page -> active slot (generation) */
	uint8_t *base_done;       /* baselines of the last completed checkpoint */
	uint8_t *base_inflight;   /* baselines of the checkpoint whose control write is in flight */
	bool inflight_valid;
	pn_lsn redo_done;         /* redo pointer of the last completed checkpoint */
	uint32_t dw_next, dw_slots, dw_used_since_sync;
	bool dw_sync_in_flight;
	uint32_t data_writes_inflight;
	/* Umbra l3/l4 selector (MAP) pages, 2 bits per heap page (umbra_policy.c) */
	struct {
		uint32_t npages;
		uint8_t *dirty, *busy, *ckpt_needed; /* per MAP page */
		pn_lsn *lsn;                         /* wal_flush_lsn: WAL before the MAP page */
	} map;

	/* checkpointer */
	struct pn_ckpt_run runs[PN_MAX_CKPT_RUNS];
	uint64_t ckpt_seq_begun, ckpt_seq_done;
	bool ckpt_requested;
	bool ckpt_pause_next;     /* script checkpoint_begin: the next run pauses after begin */
	bool ckpt_pause_select_next; /* script checkpoint_epoch: ... before it selects (l3/l4) */
	enum pn_ckpt_cause ckpt_request_cause;
	bool ckpt_request_immediate;
	uint64_t last_ckpt_ns;
	uint64_t commits_at_ckpt;
	struct pn_control control;

	/* processes: backends 0..clients-1, then checkpointer, bgwriter, walwriter, startup,
	 * page server (pushdown only runs it) */
	struct pn_proc *procs;
	uint32_t nprocs, nbackends;
	uint32_t proc_ckpt, proc_bgw, proc_walw, proc_startup, proc_ps;
	uint32_t script_pos;      /* next script step (script steps run in order) */
	bool script_busy;
	uint64_t txns_started;
	uint32_t next_xid;
	bool stopping;            /* workload done: let background work drain */

	/* I/O table */
	struct pn_io *ios;
	uint8_t *io_bufs;         /* one page-size bounce buffer per I/O */
	uint32_t nios, *io_free, io_free_len;

	/* acknowledged commits, in order (C1) */
	uint32_t *acked_xids;
	pn_lsn *acked_lsns;
	uint64_t nacked, acked_cap;
	uint64_t *latencies;      /* commit latencies, ns */
	uint64_t nlat, lat_cap;

	/* recovery (recovery.c) */
	struct pn_wal_reader reader;
	struct pn_wal_record rec;     /* the record being replayed */
	pn_lsn rec_start, rec_end, replay_end, replay_last_start;
	bool rec_valid;
	uint32_t rec_block;
	uint64_t eor_seq;
	uint32_t *dw_restore;         /* doublewrite entries to restore before replay */
	uint32_t dw_restore_len, dw_restore_pos;

	/* pushdown: the page server (pushdown.c), NULL in other modes */
	struct pn_pageserver *ps;

	struct pn_metrics m;
	struct pn_violation viol;
	bool recovering;
	bool failed;
	uint32_t check_frame_next, check_page_next; /* pn_engine_check()'s rotation */
	void *wl;                 /* the workload generator's state (workload.c's table), or NULL */
	char error[PN_ERROR_LEN];
};

/* engine.c */
bool pn_engine_init(struct pn_engine *e, const struct pn_scenario *sc, const struct pn_env *env,
		    bool fresh);
void pn_engine_free(struct pn_engine *e);
/* Formats the initial device (pages at slot 0, control file, selector): through read/write
 * callbacks the world provides, synchronously and durably, before time starts. */
typedef void (*pn_format_write_fn)(void *ctx, enum pn_file f, uint64_t off, const uint8_t *buf,
				   uint32_t len);
void pn_engine_format(struct pn_engine *e, pn_format_write_fn write, void *ctx);
/* Page p as formatting writes it (checksummed when the scenario asks). */
void pn_engine_initial_page(const struct pn_engine *e, uint32_t p, uint8_t *page);
void pn_engine_start(struct pn_engine *e);   /* schedule every process */
void pn_engine_fire(struct pn_engine *e, uint32_t proc, uint64_t token);
void pn_engine_io_done(struct pn_engine *e, struct pn_io *io);
bool pn_engine_finished(const struct pn_engine *e);
/* Field relationships, asserted; O(1) a call: global ones each time, frames and pages in
 * rotation. */
void pn_engine_check(struct pn_engine *e);
void pn_engine_violation(struct pn_engine *e, enum pn_violation_kind k, uint32_t page,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void pn_engine_finish_metrics(struct pn_engine *e);
void pn_wake(struct pn_engine *e, uint32_t proc, uint64_t delay_ns);
uint8_t *pn_frame_page(struct pn_engine *e, uint32_t frame);
void pn_engine_encode_control(const struct pn_engine *e, const struct pn_control *c, uint8_t *out);
bool pn_engine_decode_control(const uint8_t *in, struct pn_control *c);
uint32_t pn_engine_xid_commit_count(const struct pn_engine *e);

/* io (engine.c) */
struct pn_io *pn_io_get(struct pn_engine *e);
void pn_io_issue(struct pn_engine *e, struct pn_io *io);

/* wal.c */
bool pn_wal_init(struct pn_engine *e);
void pn_wal_free(struct pn_engine *e);
/* Room for a record of `len` bytes without overrunning unwritten WAL or a needed segment. */
bool pn_wal_has_room(struct pn_engine *e, uint32_t len);
/* Encodes r, assigns its place, copies it into the WAL pages; returns the end LSN. */
pn_lsn pn_wal_insert(struct pn_engine *e, struct pn_wal_record *r, enum pn_rec kind, pn_lsn *start);
pn_lsn pn_wal_insert_lsn(const struct pn_engine *e);
/* Asks for a flush up to lsn; true if already flushed, else proc is woken when it is. */
bool pn_wal_flush_request(struct pn_engine *e, pn_lsn lsn, uint32_t proc);
void pn_wal_start_flush(struct pn_engine *e, pn_lsn upto);
void pn_wal_set_end(struct pn_engine *e, pn_lsn end, pn_lsn prev_start); /* after recovery */
uint64_t pn_wal_file_offset(const struct pn_engine *e, pn_lsn page_addr);
void pn_wal_checkpoint_done(struct pn_engine *e, pn_lsn redo);

/* bufpool.c */
bool pn_buf_init(struct pn_engine *e);
void pn_buf_free(struct pn_engine *e);
/* Returns a frame for page, pinned; or PN_NO_FRAME and proc will be woken (I/O or wait). */
/* no_read: the caller overwrites the whole page (redo of an image): zero it, read nothing. */
uint32_t pn_buf_pin(struct pn_engine *e, uint32_t page, uint32_t proc, bool no_read);
void pn_buf_unpin(struct pn_engine *e, uint32_t frame);
enum pn_write_result {
	PN_WRITE_STARTED, /* I/O issued; proc (if any) is woken as each completes */
	PN_WRITE_NONE,    /* nothing to write (clean, or an unlogged hint dropped: B4) */
	PN_WRITE_WAL,     /* waiting for a WAL flush (B1); proc is woken when it is done */
	PN_WRITE_BUSY,    /* the frame or the doublewrite area is busy: try again later */
};
/* Starts writing a frame out for `why` (run: the checkpoint run for PN_WHY_CKPT). */
enum pn_write_result pn_buf_write(struct pn_engine *e, uint32_t frame, enum pn_io_why why,
				  uint32_t proc, int run);
bool pn_buf_idle(const struct pn_engine *e, uint32_t frame);

/* store.c */
bool pn_store_init(struct pn_engine *e);
void pn_store_free(struct pn_engine *e);
bool pn_store_is_slru(const struct pn_engine *e, uint32_t page);
uint64_t pn_store_offset(const struct pn_engine *e, uint32_t page, uint32_t slot);
/* Umbra: the slot a shift of `page` moves to (policy), from its current slot. */
uint32_t pn_store_shift_target(struct pn_engine *e, uint32_t page);
/* R3: called when a data write's slot is bound. */
void pn_store_check_write(struct pn_engine *e, uint32_t page, uint32_t slot);
/* A slot count of pages ever written in distinct slots (space amplification). */
uint64_t pn_store_slots_used(const struct pn_engine *e);
uint64_t pn_store_read_runs(const struct pn_engine *e);
uint32_t pn_store_selector_bytes(const struct pn_engine *e);
void pn_store_encode_selector(const struct pn_engine *e, const uint8_t *map, uint64_t seq,
			      pn_lsn redo, uint8_t *out);
bool pn_store_decode_selector(const struct pn_engine *e, const uint8_t *in, uint64_t seq,
			      uint8_t *map_out);
void pn_store_note_written(struct pn_engine *e, uint32_t page, uint32_t slot);

/* umbra_policy.c: Umbra's L3 and L4 lineages (docs/protocol.md section 4b) */
bool pn_umbra_policy(const struct pn_engine *e); /* mode umbra, policy l3 or l4 */
bool pn_umbra_init(struct pn_engine *e);
void pn_umbra_free(struct pn_engine *e);
/* Writes a FILE[:LINE:COL]: message into e->error and returns true when the scenario asks
 * for something l3/l4 (or the other modes, for l3/l4-only script steps) cannot do. */
bool pn_umbra_unsupported(struct pn_engine *e);
/* Slot index of (heap page, slot) in the data file; slots the heap reserves in all. */
uint64_t pn_umbra_slot_index(const struct pn_engine *e, uint32_t page, uint32_t slot);
uint64_t pn_umbra_heap_slots(const struct pn_engine *e);
void pn_umbra_format(struct pn_engine *e, pn_format_write_fn write, void *ctx);
/* backend: assemble the shift of block b (image or captured source), then publish it */
bool pn_umbra_hint_shifts(const struct pn_engine *e);
/* l4: a logged hint becomes XLOG2/HINT_DELTA (no image). The block data: u16 n, n x {u16
 * offset, u16 length}, then the final bytes of each fragment in order. */
bool pn_umbra_hint_delta(const struct pn_engine *e);
uint16_t pn_umbra_encode_hint_delta(const uint8_t *before, const uint8_t *after,
				    uint32_t page_size, uint8_t *out, uint16_t cap);
bool pn_umbra_apply_hint_delta(uint8_t *page, uint32_t page_size, const struct pn_wal_block *b);
void pn_umbra_assemble(struct pn_engine *e, struct pn_proc *p, struct pn_wal_block *b,
		       uint8_t *page);
/* The same for one block of a multi-block change (frame pinned; rdata: the record has data
 * for it), and the publication of one page's shift (generated workloads: in the INSERT step). */
void pn_umbra_assemble_block(struct pn_engine *e, uint32_t frame, struct pn_wal_block *b,
			     uint8_t *page, bool rdata);
void pn_umbra_publish_page(struct pn_engine *e, uint32_t frame, uint32_t target, pn_lsn lsn);
void pn_umbra_publish(struct pn_engine *e, struct pn_proc *p);
/* A HELD backend: true when its release step is the script's next (it is taken). */
bool pn_umbra_take_release(struct pn_engine *e, struct pn_proc *p);
/* checkpointer */
uint8_t pn_umbra_ckpt_slot(const struct pn_engine *e, const struct pn_frame *f,
			   const struct pn_ckpt_run *run);
void pn_umbra_ckpt_begin(struct pn_engine *e, struct pn_ckpt_run *run);
/* Where a write for run r puts frame f (its ckpt_slot[r], brought up to date for l4). */
uint8_t pn_umbra_write_slot(const struct pn_engine *e, struct pn_frame *f, int r);
uint64_t pn_umbra_ckpt_select(struct pn_engine *e, struct pn_ckpt_run *run);
uint64_t pn_umbra_ckpt_map_write(struct pn_engine *e, struct pn_ckpt_run *run);
/* Script steps wait for checkpoint seq (l3/l4; true at once for other modes): a
 * checkpoint_begin until it passed its selection and selector writes (after-map), a
 * checkpoint_epoch until its pause before selection, a checkpoint_resume (`resumed`)
 * until it blocks in the DELAY_CHKPT_START wait or passes selection. */
bool pn_umbra_ckpt_reached(const struct pn_engine *e, uint64_t seq, bool resumed);
void pn_umbra_mapwriter(struct pn_engine *e);
void pn_umbra_map_dirty(struct pn_engine *e, uint32_t page, pn_lsn lsn);
/* recovery */
bool pn_umbra_read_map(struct pn_engine *e);
/* Before reading the block of an image-free shift: selector := source; false while the
 * resident frame is being flushed (proc is woken). */
bool pn_umbra_redo_source(struct pn_engine *e, const struct pn_wal_block *b, uint32_t proc);

/* ckpt.c */
/* Flags every dirty frame for run (BufferSync's BM_CHECKPOINT_NEEDED) with its slot. */
void pn_ckpt_select(struct pn_engine *e, struct pn_ckpt_run *run);
void pn_ckpt_request(struct pn_engine *e, enum pn_ckpt_cause cause, bool immediate);
void pn_ckpt_step(struct pn_engine *e);
void pn_ckpt_io_done(struct pn_engine *e, struct pn_io *io);
bool pn_ckpt_active(const struct pn_engine *e);
void pn_ckpt_release_pause(struct pn_engine *e);

/* backend.c */
void pn_backend_step(struct pn_engine *e, struct pn_proc *p);
/* Umbra: `page` now lives in slot `target` (after its record is inserted; R4 checked). */
void pn_backend_publish_shift(struct pn_engine *e, uint32_t page, uint32_t target);

/* workload.c */
bool pn_workload_init(struct pn_engine *e);
enum pn_wl_next { PN_WL_OP, PN_WL_WAIT, PN_WL_DONE };
/* The next operation of backend `client`: an op, nothing yet (it is woken), or done.
 * For PN_OP_CHANGE the change is in e->procs[client].chg. */
enum pn_wl_next pn_workload_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
void pn_workload_free(struct pn_engine *e);
/* The initial bytes of heap page `blkno` (format): the workload's tables and indexes. */
void pn_workload_page_init(const struct pn_engine *e, uint8_t *page, uint32_t blkno);
/* Growth (wl.h): page blkno was reused by a generated workload and has not been
 * re-initialized since (its next heap insert is +INIT); the record that did it has run. */
bool pn_workload_page_stale(const struct pn_engine *e, uint32_t blkno);
void pn_workload_page_inited(struct pn_engine *e, uint32_t blkno);
/* A split decided by the workload has run (its new right leaf may now take inserts). */
void pn_workload_split_done(struct pn_engine *e, const struct pn_change *c);
/* Name of transaction type t of the workload, NULL if it has none. */
const char *pn_workload_txn_name(const struct pn_scenario *sc, int t);
/* A script step finished: let the next one start. */
void pn_workload_step_done(struct pn_engine *e, uint32_t client);
/* A run without end: bench and crashtest size the workload at init, then set
 * workload.transactions to UINT64_MAX (disk/disk.c); a workload with a fixed amount of
 * work (vacuum's pass) idles after it instead of ending the run. */
bool pn_workload_endless(const struct pn_engine *e);
/* Counts one more transaction if workload.transactions are not all started; false if not
 * (every generator's rule for the end of a run). */
bool pn_workload_txn_start(struct pn_engine *e);
/* The transaction frame of the generated workloads: after a transaction's ops (txn_len
 * set) its commit into *out; else, while transactions remain, a new one is counted and true
 * returned; otherwise false with *next = PN_WL_DONE. */
bool pn_workload_txn_next(struct pn_engine *e, struct pn_proc *p, struct pn_step *out,
			  enum pn_wl_next *next);
/* k distinct heap pages chosen uniformly into p->txn_pages; txn_len = k, txn_pos = 1. */
void pn_workload_pick_pages(struct pn_engine *e, struct pn_proc *p, uint32_t k);

/* Workload generators with their own pages and records (wl_vacuum.c, wl_btree.c, wl_slru.c).
 * Each: init (sizes the relation: may set heap_pages/pages), the initial bytes of a page,
 * the next op of a client; the vacuum and btree ops are changed by their own function,
 * called from backend.c's INSERT step (the change, its records, images, shifts). */
/* wl_record.c: register a block (image or shift, decided now), insert and stamp. */
enum pn_wl_reg {
	PN_REG_STANDARD,  /* REGBUF_STANDARD: an image leaves out the hole */
	PN_REG_PLAIN,     /* not standard (the VM page): an image is the whole page */
	PN_REG_HINT,      /* XLogSaveBufferForHint's image */
	PN_REG_WILL_INIT, /* a page the record rebuilds: no image (Umbra: a birth shift) */
};
/* Marks block b of page pg (bytes `page`) with its image (the hole left out unless whole)
 * and/or its slot shift (the next target), as decided; the decision is the caller's. */
void pn_wl_mark(struct pn_engine *e, struct pn_wal_block *b, uint32_t pg, uint8_t *page,
		bool image, bool whole, bool shift);
void pn_wl_protect(struct pn_engine *e, struct pn_wal_block *b, uint32_t pg, uint8_t *page,
		   enum pn_wl_reg reg);
/* The pages op p->op changes besides its own (pinned first); returns how many (<= 2). */
uint32_t pn_wl_extra_pages(struct pn_engine *e, struct pn_proc *p, uint32_t *pages);
/* Pins them into p->extra_frames; false if the process must wait (it is woken). */
bool pn_wl_pin_extra(struct pn_engine *e, struct pn_proc *p);
void pn_wl_unpin_extra(struct pn_engine *e, struct pn_proc *p);
pn_lsn pn_wl_insert(struct pn_engine *e, struct pn_wal_record *r, enum pn_rec kind,
		    const uint32_t *frames);
/* A change no WAL covers (hint bits): dirty, and only hint-dirty if it was clean. */
void pn_wl_hint_dirty(struct pn_engine *e, uint32_t frame);
bool pn_wl_vacuum_init(struct pn_engine *e);
void pn_wl_vacuum_page_init(const struct pn_engine *e, uint32_t p, uint8_t *page);
enum pn_wl_next pn_wl_vacuum_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
/* The visibility-map page of heap page `p` (pinned with it), or false if none. */
bool pn_wl_vacuum_vm_page(const struct pn_engine *e, uint32_t p, uint32_t *vm);
void pn_wl_vacuum_change(struct pn_engine *e, struct pn_proc *p);
bool pn_wl_btree_init(struct pn_engine *e);
void pn_wl_btree_page_init(const struct pn_engine *e, uint32_t p, uint8_t *page);
enum pn_wl_next pn_wl_btree_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
void pn_wl_btree_change(struct pn_engine *e, struct pn_proc *p);
bool pn_wl_slru_init(struct pn_engine *e);
enum pn_wl_next pn_wl_slru_next(struct pn_engine *e, uint32_t client, struct pn_step *out);
void pn_wl_btree_split(struct pn_engine *e, struct pn_proc *p);
/* Splits that recycled a leaf (wl_btree.c, Growth). */
uint64_t pn_wl_btree_recycled(const struct pn_engine *e);
/* Splits of a leaf that held one key among that key's items (wl_btree.c, single value). */
uint64_t pn_wl_btree_single_value_splits(const struct pn_engine *e);
uint32_t pn_wl_btree_split_pages(struct pn_engine *e, struct pn_proc *p, uint32_t *pages);
/* Redo of the workloads' records (called by pn_page_apply; block index from r->blocks). */
bool pn_wl_apply_visible(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b);
bool pn_wl_apply_freeze_plans(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b);
bool pn_wl_btree_is_leaf(const uint8_t *page, uint32_t page_size);
bool pn_wl_apply_btree_dedup(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b);

/* recovery.c */
bool pn_recovery_begin(struct pn_engine *e);
void pn_recovery_step(struct pn_engine *e, struct pn_proc *p);

/* pushdown.c: the page server (pushdown mode only; docs/protocol.md section 7) */
bool pn_ps_init(struct pn_engine *e);
void pn_ps_free(struct pn_engine *e);
/* Offset in PN_FILE_PAGESERVER of image slot `slot` (0 or 1) of page `page`. */
uint64_t pn_ps_image_offset(const struct pn_engine *e, uint32_t page, uint32_t slot);
/* Formatting: every page's initial image in slot 0 and metadata area 0 naming them. */
void pn_ps_format(struct pn_engine *e, pn_format_write_fn write, void *ctx);
void pn_ps_start(struct pn_engine *e);
void pn_ps_step(struct pn_engine *e);
/* The compute drops a dirty buffer instead of writing it (its last-written LSN is kept). */
void pn_ps_drop(struct pn_engine *e, uint32_t frame);
/* A buffer miss: true when the page server can serve `page` now; else `proc` is woken
 * later (after a WAL flush, or when the page server has ingested it). */
bool pn_ps_page_ready(struct pn_engine *e, uint32_t page, uint32_t proc);
/* GetPage@LSN into `frame` (marked reading); `proc` is woken when it is there. */
void pn_ps_request(struct pn_engine *e, uint32_t frame, uint32_t page, uint32_t proc);
/* Recovery: load the durable metadata (verifying the images it names); the LSN replay
 * must start from to re-ingest every delta the images lack (<= redo). */
bool pn_ps_recover(struct pn_engine *e, pn_lsn redo, pn_lsn *replay_from);
/* One WAL record, as ingested at run time or re-ingested by recovery. */
void pn_ps_ingest_record(struct pn_engine *e, const struct pn_wal_record *r, pn_lsn start,
			 pn_lsn end);
void pn_ps_recovery_end(struct pn_engine *e, pn_lsn end, pn_lsn last_start);
/* Page `page` as of `lsn` (image + deltas with end <= lsn) into out; returns the number
 * of deltas replayed. */
uint32_t pn_ps_reconstruct(struct pn_engine *e, uint32_t page, pn_lsn lsn, uint8_t *out);
/* Nothing to ingest, serve or write (always true outside pushdown). */
bool pn_ps_idle(const struct pn_engine *e);
/* After every event: wakes the page server if it sleeps while not idle. */
void pn_ps_rearm(struct pn_engine *e);
void pn_ps_check(struct pn_engine *e);
/* End LSN of the last record the page server ingested. */
pn_lsn pn_ps_ingested(const struct pn_engine *e);
/* The oldest WAL LSN the page server still needs (UINT64_MAX when it needs none). */
pn_lsn pn_ps_horizon(const struct pn_engine *e);
void pn_ps_finish_metrics(struct pn_engine *e);

#endif

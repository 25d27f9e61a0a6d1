/*
 * client.h: the workload client interface (engine layer, owned by client.c): the only thing
 * the engine knows of a workload. A workload (src/workload/) fills one struct pn_client_ops
 * with designated initializers; the assembly (whoever calls pn_engine_init: sim/world.c,
 * disk/disk.c, tests) passes the row down, so the engine never names a workload.
 *
 * struct pn_client is a backend as a workload sees it: its number, its transaction, the op
 * it runs, and (through the pn_client_* services below) its pinned pages, the image/shift
 * decision for a block, the record insert, the engine's PRNG and wake-ups. A workload's
 * per-client state (its transaction's pages, a script's position) is its own, in the state
 * its init returned.
 */
#ifndef PN_CLIENT_H
#define PN_CLIENT_H

#include "procs.h"
#include "redo.h"
#include "scenario.h"
#include "walfmt.h"

struct pn_bufpool;
struct pn_ckpt;
struct pn_metrics;
struct pn_proto_ctx;
struct pn_protocol_ops;
struct pn_services;
struct pn_store;
struct pn_wal;
struct pn_client_ops;

/* What a workload's init reads, and the relation's size it may set: in, the scenario's
 * (storage.pages heap pages, then slru_pages SLRU pages); out, the workload's (pages =
 * heap_pages + slru_pages). A refusal is a message in error (error_size bytes). */
struct pn_client_setup {
	const struct pn_scenario *sc;
	char *error;
	size_t error_size;
	uint32_t page_size;
	uint32_t slru_pages;
	uint32_t heap_pages, pages;
};

/* What the client services work with (set by the assembly once the workload's init has
 * run): the scenario, the modules a change uses, the protocol's row and context (the image / shift
 * decision), the workload's row and its state, and the sizes fixed at init. */
struct pn_client_handles {
	const struct pn_scenario *sc;
	struct pn_services *svc;
	struct pn_wal *wal;
	struct pn_bufpool *buf;
	struct pn_store *store;
	struct pn_ckpt *ckpt;
	struct pn_metrics *m;
	const struct pn_protocol_ops *proto;
	struct pn_proto_ctx *pctx;
	const struct pn_client_ops *ops;
	void *state;
	uint32_t page_size, pages, nbackends;
};

/* What a workload's next() gives: an op in *out, nothing yet (the client is woken when
 * there is something: the workload wakes it), or the client is done. */
enum pn_client_next { PN_CLIENT_OP, PN_CLIENT_WAIT, PN_CLIENT_DONE };

/* A backend as a workload sees it (built by the engine for each call). h and p are for the
 * pn_client_* services only. */
struct pn_client {
	const struct pn_client_handles *h;
	struct pn_proc *p;
	uint32_t id;              /* backend 0..workload.clients-1 */
	uint32_t xid;             /* its transaction's xid, 0 before its first write */
	uint32_t ops_in_txn;      /* write ops of its transaction so far */
	const struct pn_step *op; /* change(), extra_pages(): the op being run */
};

/* One workload: NULL hooks are "none" (page_init NULL: pn_page_init's empty heap page). */
struct pn_client_ops {
	const char *name;
	/* Allocates *state (set before any failure, so that free can follow); may size the
	 * relation (s->heap_pages, s->pages); false with s->error set refuses the scenario. */
	bool (*init)(struct pn_client_setup *s, void **state);
	void (*free)(void *state);
	/* The initial bytes of heap page `page` (format). */
	void (*page_init)(const void *state, uint32_t page, uint8_t *bytes);
	/* The bytes page_init gave at format time, from the page number alone, at any time
	 * later (whatever the run has changed in state since): NULL when the row cannot, and
	 * then the device is formatted up front (sim/chunks.h CK3). */
	void (*page_init_fixed)(const void *state, uint32_t page, uint8_t *bytes);
	/* The next operation of client c; for PN_OP_CHANGE the change goes to
	 * *pn_client_change_slot(c). */
	enum pn_client_next (*next)(void *state, const struct pn_client *c, struct pn_step *out);
	/* The ops the workload changes itself (PN_OP_VACUUM_PAGE, PN_OP_BT_INSERT,
	 * PN_OP_BT_SPLIT): in the INSERT step, records through pn_client_insert. */
	void (*change)(void *state, const struct pn_client *c);
	/* The pages op c->op changes besides its own (pinned first, in this order; <= 2). */
	uint32_t (*extra_pages)(const void *state, const struct pn_client *c, uint32_t *pages);
	/* Growth (src/workload/layout.h): page was reused and is not re-initialized yet (its next heap
	 * insert is +INIT); page_inited: the record that re-initializes it has run. */
	bool (*page_stale)(const void *state, uint32_t page);
	void (*page_inited)(void *state, uint32_t page);
	/* A PN_OP_CHANGE change has run (a split's new leaf may take inserts now). */
	void (*change_done)(void *state, const struct pn_client *c, const struct pn_change *chg);
	/* c's op has finished (a script's next step may start). */
	void (*step_done)(void *state, const struct pn_client *c);
	/* Name of transaction type t, NULL if none (metrics per type). */
	const char *(*txn_name)(int type);
};

/* ---- the services a workload's change uses (client.c) ---- */

/* How a block is registered (the image / shift decision of pn_client_protect). */
enum pn_client_reg {
	PN_REG_STANDARD,  /* REGBUF_STANDARD: an image leaves out the hole */
	PN_REG_PLAIN,     /* not standard (the VM page): an image is the whole page */
	PN_REG_HINT,      /* XLogSaveBufferForHint's image */
	PN_REG_WILL_INIT, /* a page the record rebuilds: no image (Umbra: a birth shift) */
};
/* Pinned page i of c's op: 0 its own page, then its extra pages in extra_pages() order. */
uint32_t pn_client_pinned(const struct pn_client *c);
uint32_t pn_client_frame(const struct pn_client *c, uint32_t i);
uint8_t *pn_client_page(const struct pn_client *c, uint32_t i);
uint32_t pn_client_blkno(const struct pn_client *c, uint32_t i);
/* Marks block b of page pg (bytes `page`) with its image (the hole left out unless whole)
 * and/or its slot shift (the next target), as decided; the decision is the caller's. */
void pn_client_mark(const struct pn_client *c, struct pn_wal_block *b, uint32_t pg, uint8_t *page,
		    bool image, bool whole, bool shift);
void pn_client_protect(const struct pn_client *c, struct pn_wal_block *b, uint32_t pg,
		       uint8_t *page, enum pn_client_reg reg);
/* Inserts r (blocks on frames[i]), stamps and dirties its pages, reports each shift
 * through the engine's hook (the shift's publication and R4 are the engine's). */
pn_lsn pn_client_insert(const struct pn_client *c, struct pn_wal_record *r, enum pn_rec kind,
			const uint32_t *frames);
/* A hint-bit change of page pg (bytes `page`) on `frame`, as MarkBufferDirtyHint: with
 * checksums or wal_log_hints, the page's first change after the redo pointer writes
 * XLOG/FPI_FOR_HINT (XLogSaveBufferForHint), with the image when the protocol takes one and
 * without under full_page_writes = off (PostgreSQL still writes the record, 44 B, and
 * stamps the page's LSN); otherwise the page is only hint-dirty. True if an image was
 * logged (PostgreSQL 16's opportunistic freezing asks that). */
bool pn_client_hint(const struct pn_client *c, uint32_t frame, uint32_t pg, uint8_t *page);
/* A change no WAL covers (hint bits): dirty, and only hint-dirty if it was clean. */
void pn_client_hint_dirty(const struct pn_client *c, uint32_t frame);
/* Bytes a change changed logically (metrics). */
void pn_client_changed(const struct pn_client *c, uint64_t bytes);
/* The run's WAL figures count from here (metrics.h's pn_metrics_wal_baseline). */
void pn_client_count_wal_from_here(const struct pn_client *c);
/* lo + the engine's next random number mod (hi - lo + 1). */
uint64_t pn_client_random(const struct pn_client *c, uint64_t lo, uint64_t hi);
/* Wakes backend `client` after delay_ns (0: now). */
void pn_client_wake(const struct pn_client *c, uint32_t client, uint64_t delay_ns);
/* next(): where a PN_OP_CHANGE's change goes; the type of the transaction c begins. */
struct pn_change *pn_client_change_slot(const struct pn_client *c);
void pn_client_begin_txn(const struct pn_client *c, int type);

/* ---- the engine's side (backend.c, engine.c, the protocol rows), over the handles ---- */

/* The view of backend p, for a call into the workload. */
struct pn_client pn_client_of(const struct pn_client_handles *h, struct pn_proc *p);
/* The workload's next op for backend p. */
enum pn_client_next pn_client_next(const struct pn_client_handles *h, struct pn_proc *p,
				   struct pn_step *out);
/* The op's extra pages pinned into p->extra_frames; false if it must wait (it is woken). */
bool pn_client_pin_extra(const struct pn_client_handles *h, struct pn_proc *p);
/* Page p as the relation lays it out before any change (the workload's page_init, or an
 * empty heap or SLRU page), checksummed when checksums are on: formatting and smgrextend. */
void pn_client_initial_page(const struct pn_client_handles *h, uint32_t p, uint8_t *page);
/* The bytes pn_client_initial_page gave page p at format time, built at any time later
 * (the workload's page_init_fixed): false, and nothing built, when the workload has none. */
bool pn_client_initial_fixed(const struct pn_client_handles *h, uint32_t p, uint8_t *page);
void pn_client_unpin_extra(const struct pn_client_handles *h, struct pn_proc *p);

#endif

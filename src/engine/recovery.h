/*
 * recovery.h: the startup process (engine layer, owned by recovery.c, whose header draws its
 * five steps): control file -> checkpoint -> baselines -> redo. struct pn_recovery owns the
 * WAL reader, the record being replayed and where replay ended; it works with the handles
 * set at init (struct pn_recovery_handles), never with the engine.
 */
#ifndef PN_RECOVERY_H
#define PN_RECOVERY_H

#include "pn.h"
#include "procs.h"
#include "walfmt.h"

struct pn_bufpool;
struct pn_ckpt;
struct pn_metrics;
struct pn_proto_ctx;
struct pn_protocol_ops;
struct pn_scenario;
struct pn_services;
struct pn_store;
struct pn_wal;

/* What recovery works with: the modules it replays through, the protocol's row and context
 * (protocol.h's recovery section), the startup process it runs as (whose state it alone
 * sets), and the engine's next xid, which replay advances. The assembly stops the backends
 * before it begins (engine.c pn_engine_recover). */
struct pn_recovery_handles {
	const struct pn_scenario *sc;
	struct pn_services *svc;
	struct pn_wal *wal;
	struct pn_bufpool *buf;
	struct pn_store *store;
	struct pn_ckpt *ckpt;
	struct pn_metrics *m;
	const struct pn_protocol_ops *proto;
	struct pn_proto_ctx *pctx;
	struct pn_proc *procs;
	uint32_t proc_startup;
	uint32_t *next_xid;
	uint64_t sysid;
	uint32_t page_size, pages, generations;
};

struct pn_recovery {
	struct pn_recovery_handles h; /* set at init */
	bool active;                  /* from pn_recovery_begin to the end-of-recovery checkpoint */
	struct pn_wal_reader reader;
	struct pn_wal_record rec; /* the record being replayed */
	pn_lsn rec_start, rec_end;
	bool rec_valid;
	uint32_t rec_block;                   /* its next block */
	pn_lsn replay_end, replay_last_start; /* the end of the last record replayed, its start */
	uint64_t eor_seq;                     /* the end-of-recovery checkpoint's number */
};

void pn_recovery_init(struct pn_recovery *rv, const struct pn_recovery_handles *h);
void pn_recovery_free(struct pn_recovery *rv);
/* Steps 1-3 and the start of replay; false (a violation or e->svc.error set) if it cannot. */
bool pn_recovery_begin(struct pn_recovery *rv);
/* One step of the startup process p. */
void pn_recovery_step(struct pn_recovery *rv, struct pn_proc *p);

#endif

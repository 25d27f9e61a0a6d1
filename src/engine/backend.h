/*
 * backend.h: the client backends (engine layer, owned by backend.c): the steps of an update,
 * a commit, script steps. The process struct, its kinds and a backend's states are procs.h's.
 * struct pn_backends owns what only the backends write: the acknowledged-commit log (C1) and
 * the commit latencies; the rest reads it through pn_backends_acks(). The steps work with
 * the handles they are given (struct pn_backend_handles), never with the engine.
 */
#ifndef PN_BACKEND_H
#define PN_BACKEND_H

#include "procs.h"

struct pn_client_handles;

/* What the backends work with besides their log (pn_backends_bind): the client services'
 * handles (client.h: services, WAL, pool, store, checkpointer, metrics, the protocol's and
 * the workload's rows with their state, the page size, the number of backends), the
 * processes (backends 0 .. nbackends-1), the next xid (shared with the checkpointer and
 * recovery) and the relation's heap and SLRU pages. */
struct pn_backend_handles {
	const struct pn_client_handles *cl;
	struct pn_proc *procs;
	uint32_t *next_xid;
	uint32_t heap_pages, slru_pages;
};

/* The backends' own state: their handles (set by pn_backends_bind), and the commits
 * acknowledged since the last drain, in order (C1), and their latencies (ns):
 * latencies[i] is commit i's while i < nlat. Sized at init for the whole run. */
struct pn_backends {
	const struct pn_client_handles *cl;
	struct pn_proc *procs;
	uint32_t *next_xid;
	uint32_t heap_pages, slru_pages;
	uint32_t *acked_xids;
	pn_lsn *acked_lsns;
	uint64_t nacked, acked_cap;
	uint64_t *latencies;
	uint64_t nlat, lat_cap;
};

/* A view of the log: what pn_backends_acks() gives (latencies[i] is commit i's while i < nlat). */
struct pn_acks_view {
	const uint32_t *xids;
	const pn_lsn *lsns;
	uint64_t n;
	const uint64_t *latencies;
	uint64_t nlat;
};
typedef void (*pn_ack_fn)(void *arg, uint32_t xid, pn_lsn lsn, uint64_t latency_ns);

/* Room for `commits` acknowledged commits; false if out of memory (free may follow). */
bool pn_backends_init(struct pn_backends *bk, uint64_t commits);
void pn_backends_free(struct pn_backends *bk);
void pn_backends_acks(const struct pn_backends *bk, struct pn_acks_view *out);
/* Hands each commit to fn (latency 0 past nlat), in order, and empties the log. */
void pn_backends_drain(struct pn_backends *bk, pn_ack_fn fn, void *arg);
/* The latencies' p50, p99 and max (reorders them: selection); false if there are none. */
bool pn_backends_latency(struct pn_backends *bk, uint64_t *p50, uint64_t *p99, uint64_t *max);

/* The handles the steps work with (after pn_backends_init). */
void pn_backends_bind(struct pn_backends *bk, const struct pn_backend_handles *h);
/* One step of backend p (its state, procs.h's enum pn_bstate). */
void pn_backend_step(struct pn_backends *bk, struct pn_proc *p);
/* The one writer of a backend's (and the startup process's) state after init: asserts the
 * edge (procs.h's diagram; legal[][] in backend.c). */
void pn_backend_set_state(struct pn_proc *p, enum pn_bstate to);
/* Field relationships of the backends, asserted (pn_engine_check): a backend between its
 * DECIDE and the end of its op holds its page pinned, and locked after DECIDE. */
void pn_backend_check(const struct pn_backends *bk);

#endif

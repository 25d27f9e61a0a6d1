/*
 * umbra_policy.h: Umbra's L3 and L4 lineages (engine layer, owned by umbra_policy.c;
 * docs/protocol.md section 4b): slots, publication, selector (MAP) pages, checkpoint
 * selection and epochs, redo of image-free shifts, hint deltas; the pn_umbra_* hooks the
 * backend, checkpointer, store and recovery call.
 */
#ifndef PN_UMBRA_POLICY_H
#define PN_UMBRA_POLICY_H

#include "store.h"
#include "walfmt.h"

struct pn_engine;
struct pn_proc;
struct pn_frame;
struct pn_ckpt_run;

bool pn_umbra_policy(const struct pn_engine *e); /* mode umbra, policy l3 or l4 */
bool pn_umbra_init(struct pn_engine *e);
void pn_umbra_free(struct pn_engine *e);
/* Writes a FILE[:LINE:COL]: message into e->svc.error and returns true when the scenario asks
 * for something l3/l4 (or the other modes, for l3/l4-only script steps) cannot do. */
bool pn_umbra_unsupported(struct pn_engine *e);
/* Slot index of (heap page, slot) in the data file; slots the heap reserves in all. */
uint64_t pn_umbra_slot_index(const struct pn_engine *e, uint32_t page, uint32_t slot);
uint64_t pn_umbra_heap_slots(const struct pn_engine *e);
void pn_umbra_format(struct pn_engine *e, pn_format_write_fn write, void *ctx);
/* backend: assemble the shift of block b (image or captured source), then publish it */
bool pn_umbra_hint_shifts(const struct pn_engine *e);
/* l4: a logged hint becomes XLOG2/HINT_DELTA (no image; its codec is redo_xlog.h's
 * pn_hint_delta_encode). */
bool pn_umbra_hint_delta(const struct pn_engine *e);
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

#endif

/*
 * umbra.h: what the three umbra rows share (protocol layer, owned by umbra.c): the slot
 * count, the selector file's size, the image / shift decision, late binding (the
 * aio_late_bind mutant), and the sub-states of a checkpoint run in the protocol's steps.
 */
#ifndef PN_UMBRA_H
#define PN_UMBRA_H

#include "rows.h"

/* A checkpoint run's sub-state (run->proto_sub) while in PN_C_PROTO_SELECT (l3/l4) and
 * PN_C_PROTO_DURABLE (all three rows):
 *   l3/l4:      SELECT --selected--> MAP_WRITE --map pages written--> (WRITING)
 *               (data fsync) SELECTOR_FSYNC --> (RECORD)
 *   prototype:  (data fsync) SELECTOR_WRITE --> SELECTOR_FSYNC --> (RECORD)
 *               (the selector_unsynced mutant goes from SELECTOR_WRITE to RECORD) */
enum umbra_ckpt_state { UC_SELECT, UC_MAP_WRITE, UC_SELECTOR_WRITE, UC_SELECTOR_FSYNC };

uint32_t pn_umbra_generations(const struct pn_scenario *sc);
uint64_t pn_umbra_file_size(const struct pn_proto_ctx *pc, enum pn_file f);
unsigned pn_umbra_decide(const struct pn_proto_ctx *pc, enum pn_block_use use, bool before_redo);
bool pn_umbra_bind_late(const struct pn_proto_ctx *pc, uint32_t page);
/* R4 on a resident frame (the prototype's check_frame), except for a page whose image_redo
 * (1 + the redo pointer of its last fallback image, 0: none) is past the completed
 * checkpoint's redo: the pool's P5 and gen2's G4. */
void pn_umbra_check_frame_imaged(struct pn_proto_ctx *pc, uint32_t frame, const pn_lsn *image_redo);

/* ---- the base row (umbra.c's pn_protocol_umbra, the prototype) ----
 * Its hooks, which the variants compose: gen2 names them in its table; the pool calls them
 * from its own (its map after the selector). l3/l4 (umbra_map.c) share only the decision
 * and the slot count above: their checkpoint and recovery are their own. */
void pn_umbra_format(struct pn_proto_ctx *pc, pn_format_write_fn write, void *ctx);
/* R4 at publication: the page moves to `target`, which must not be its baseline. */
void pn_umbra_shifted(struct pn_proto_ctx *pc, uint32_t frame, uint32_t target, pn_lsn lsn);
/* Snapshot of the slot map at begin; after the data fsync the selector written and fsynced
 * (R5); in-flight baselines at the control write, completed baselines at the end. */
void pn_umbra_ckpt_begin(struct pn_proto_ctx *pc, struct pn_ckpt_run *run);
uint64_t pn_umbra_ckpt_durable_step(struct pn_proto_ctx *pc, struct pn_ckpt_run *run);
void pn_umbra_ckpt_io_done(struct pn_proto_ctx *pc, struct pn_ckpt_run *run);
void pn_umbra_ckpt_control(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run);
void pn_umbra_ckpt_end(struct pn_proto_ctx *pc, const struct pn_ckpt_run *run);
/* The base's checkpoint phase whole, for a variant's table (.ckpt = PN_UMBRA_BASE_CKPT). */
#define PN_UMBRA_BASE_CKPT                                                                \
	{                                                                                 \
		.begin = pn_umbra_ckpt_begin, .durable_step = pn_umbra_ckpt_durable_step, \
		.io_done = pn_umbra_ckpt_io_done, .control = pn_umbra_ckpt_control,       \
		.end = pn_umbra_ckpt_end                                                  \
	}
/* The selector area the control file names becomes the baselines and the slot map. */
bool pn_umbra_recovery_begin(struct pn_proto_ctx *pc, const struct pn_control *c);
/* R4 on a resident frame. */
void pn_umbra_check_frame(struct pn_proto_ctx *pc, uint32_t frame);

#endif

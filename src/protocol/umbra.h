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
/* The pool's and gen2's unsupported hook: a key the row does not read, given in the file
 * (at: the loader's LINE and COLUMN, 0 when absent; --mode chose the policy), is refused
 * with `what` at its position; then the script steps only l3 and l4 run. */
/* R4 on a resident frame (the prototype's check_frame), except for a page whose image_redo
 * (1 + the redo pointer of its last fallback image, 0: none) is past the completed
 * checkpoint's redo: the pool's P5 and gen2's G4. */
void pn_umbra_check_frame_imaged(struct pn_proto_ctx *pc, uint32_t frame, const pn_lsn *image_redo);
/* The prototype's slot, checkpoint and recovery hooks in a row's table: the prototype and
 * gen2 define them under these names (gen2 calls the prototype's through its row). */
#define PN_UMBRA_PROTOTYPE_HOOKS                                              \
	.format = format, .shifted = shifted, .ckpt_begin = ckpt_begin,       \
	.ckpt_durable_step = ckpt_durable_step, .ckpt_io_done = ckpt_io_done, \
	.ckpt_control = ckpt_control, .ckpt_end = ckpt_end, .recovery_begin = recovery_begin
bool pn_umbra_refuse_key(struct pn_proto_ctx *pc, const uint32_t at[2], const char *what);

#endif

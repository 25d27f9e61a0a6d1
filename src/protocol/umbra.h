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

#endif
